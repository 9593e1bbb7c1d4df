/*
 * json: see json.h.
 */
#include "cli/json.h"

#include <stdint.h>

/* Length of the valid UTF-8 sequence at s, or 0. */
static int utf8_length(const unsigned char *s)
{
    int n;
    uint32_t cp;
    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xe0) == 0xc0) {
        n = 2;
        cp = s[0] & 0x1f;
    } else if ((s[0] & 0xf0) == 0xe0) {
        n = 3;
        cp = s[0] & 0x0f;
    } else if ((s[0] & 0xf8) == 0xf0) {
        n = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

void json_string(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    putc('"', out);
    while (*p) {
        unsigned char c = *p;
        if (c == '<') {
            /* so that the text can sit inside an HTML <script> element */
            fputs("\\u003c", out);
            p++;
        } else if (c == '"' || c == '\\') {
            putc('\\', out);
            putc(c, out);
            p++;
        } else if (c < 0x20) {
            switch (c) {
            case '\n': fputs("\\n", out); break;
            case '\r': fputs("\\r", out); break;
            case '\t': fputs("\\t", out); break;
            default: fprintf(out, "\\u%04x", c); break;
            }
            p++;
        } else if (c < 0x80) {
            putc(c, out);
            p++;
        } else {
            int n = utf8_length(p);
            if (n == 0) {
                fputs("\\ufffd", out);
                p++;
            } else {
                fwrite(p, 1, (size_t)n, out);
                p += n;
            }
        }
    }
    putc('"', out);
}

void json_uint(FILE *out, uint64_t v, int first)
{
    char b[24];
    size_t i = sizeof b;
    do {
        b[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (!first)
        b[--i] = ',';
    fwrite_unlocked(b + i, 1, sizeof b - i, out);
}

void json_pack(FILE *out, uint64_t v)
{
    static const char digit[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_";
    char b[16];
    size_t i = sizeof b;
    b[--i] = digit[v & 31];
    for (v >>= 5; v; v >>= 5)
        b[--i] = digit[32 + (v & 31)];
    fwrite_unlocked(b + i, 1, sizeof b - i, out);
}
