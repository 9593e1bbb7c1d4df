/*
 * utf: see utf.h.
 */
#include "common/utf.h"

size_t utf16_to_utf8(const uint16_t *in, size_t n, char *out, size_t size)
{
    size_t o = 0;
    if (size == 0)
        return 0;
    for (size_t i = 0; i < n && in[i]; i++) {
        uint32_t c = in[i];
        if (c >= 0xD800 && c <= 0xDBFF && i + 1 < n && in[i + 1] >= 0xDC00 && in[i + 1] <= 0xDFFF) {
            c = 0x10000 + ((c - 0xD800) << 10) + (in[i + 1] - 0xDC00u);
            i++;
        } else if (c >= 0xD800 && c <= 0xDFFF) {
            c = 0xFFFD;
        }
        unsigned char tmp[4];
        size_t k;
        if (c < 0x80) {
            tmp[0] = (unsigned char)c;
            k = 1;
        } else if (c < 0x800) {
            tmp[0] = (unsigned char)(0xC0 | (c >> 6));
            tmp[1] = (unsigned char)(0x80 | (c & 0x3F));
            k = 2;
        } else if (c < 0x10000) {
            tmp[0] = (unsigned char)(0xE0 | (c >> 12));
            tmp[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
            tmp[2] = (unsigned char)(0x80 | (c & 0x3F));
            k = 3;
        } else {
            tmp[0] = (unsigned char)(0xF0 | (c >> 18));
            tmp[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
            tmp[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
            tmp[3] = (unsigned char)(0x80 | (c & 0x3F));
            k = 4;
        }
        if (o + k > size - 1)
            break;
        for (size_t j = 0; j < k; j++)
            out[o++] = (char)tmp[j];
    }
    out[o] = '\0';
    return o;
}
