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

long utf8_to_utf16(const char *in, uint16_t *out, size_t room)
{
    const unsigned char *p = (const unsigned char *)in;
    size_t o = 0;
    while (*p) {
        uint32_t c;
        size_t k;
        if (p[0] < 0x80) {
            c = p[0];
            k = 1;
        } else if ((p[0] & 0xE0) == 0xC0) {
            c = p[0] & 0x1Fu;
            k = 2;
        } else if ((p[0] & 0xF0) == 0xE0) {
            c = p[0] & 0x0Fu;
            k = 3;
        } else if ((p[0] & 0xF8) == 0xF0) {
            c = p[0] & 0x07u;
            k = 4;
        } else {
            return -1;
        }
        for (size_t j = 1; j < k; j++) {
            if ((p[j] & 0xC0) != 0x80)
                return -1;
            c = c << 6 | (p[j] & 0x3Fu);
        }
        /* overlong forms, surrogates and values past U+10FFFF are not UTF-8 */
        if ((k == 2 && c < 0x80) || (k == 3 && c < 0x800) || (k == 4 && c < 0x10000) ||
            (c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF)
            return -1;
        p += k;
        if (c >= 0x10000) {
            if (o + 2 >= room)
                return -1;
            c -= 0x10000;
            out[o++] = (uint16_t)(0xD800 + (c >> 10));
            out[o++] = (uint16_t)(0xDC00 + (c & 0x3FF));
        } else {
            if (o + 1 >= room)
                return -1;
            out[o++] = (uint16_t)c;
        }
    }
    if (o >= room)
        return -1;
    out[o] = 0;
    return (long)o;
}
