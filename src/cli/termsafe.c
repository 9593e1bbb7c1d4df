/*
 * termsafe: see termsafe.h.
 */
#include "cli/termsafe.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Length of the UTF-8 character at p (1..4) and its code point, or 0 when
 * the bytes there are not one (bad lead, bad continuation, overlong, a
 * surrogate, past U+10FFFF). */
static size_t utf8_char(const unsigned char *p, uint32_t *cp)
{
    unsigned char c = p[0];
    size_t n;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if ((c & 0xe0) == 0xc0) {
        n = 2, v = c & 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
        n = 3, v = c & 0x0f, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
        n = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) /* a NUL ends it here too */
            return 0;
        v = v << 6 | (p[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return n;
}

static int hidden_char(uint32_t cp)
{
    return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) ||
           (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

char *termsafe(const char *in, char *out, size_t size)
{
    if (!size)
        return out;
    const unsigned char *p = (const unsigned char *)in;
    size_t o = 0;
    while (*p) {
        uint32_t cp = 0;
        size_t n = utf8_char(p, &cp);
        char esc[12];
        const char *piece = (const char *)p;
        size_t len = n;
        if (!n) {
            snprintf(esc, sizeof esc, "\\x%02x", *p);
            piece = esc, len = 4, n = 1;
        } else if (hidden_char(cp)) {
            if (cp < 0x80)
                snprintf(esc, sizeof esc, "\\x%02x", (unsigned)cp);
            else
                snprintf(esc, sizeof esc, "\\u%04x", (unsigned)cp);
            piece = esc, len = strlen(esc);
        }
        if (o + len >= size)
            break;
        memcpy(out + o, piece, len);
        o += len;
        p += n;
    }
    out[o] = '\0';
    return out;
}
