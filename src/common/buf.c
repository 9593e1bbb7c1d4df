/*
 * buf: byte buffers and checked cursors (see buf.h).  Varints are unsigned
 * LEB128, at most 10 bytes for 64 bits; a longer or overflowing encoding is
 * a decode error, so corrupt input cannot make the reader loop or misread.
 */
#include "common/buf.h"

#include <string.h>

#include "common/mem.h"

void buf_init(struct buf *b)
{
    memset(b, 0, sizeof *b);
}

void buf_free(struct buf *b)
{
    mem_free(b->data);
    buf_init(b);
}

void buf_reset(struct buf *b)
{
    b->len = 0;
    b->failed = 0;
}

int buf_reserve(struct buf *b, size_t n)
{
    if (b->failed)
        return -1;
    if (n > SIZE_MAX - b->len) {
        b->failed = 1;
        return -1;
    }
    void *p = mem_grow(b->data, &b->cap, b->len + n, 1);
    if (!p) {
        b->failed = 1;
        return -1;
    }
    b->data = p;
    return 0;
}

void buf_put(struct buf *b, const void *p, size_t n)
{
    if (n == 0 || buf_reserve(b, n) < 0)
        return;
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void buf_put_u8(struct buf *b, uint8_t v)
{
    buf_put(b, &v, 1);
}

void buf_put_u16le(struct buf *b, uint16_t v)
{
    uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    buf_put(b, x, 2);
}

void buf_put_u32le(struct buf *b, uint32_t v)
{
    uint8_t x[4];
    for (int i = 0; i < 4; i++)
        x[i] = (uint8_t)(v >> (8 * i));
    buf_put(b, x, 4);
}

void buf_put_u64le(struct buf *b, uint64_t v)
{
    uint8_t x[8];
    for (int i = 0; i < 8; i++)
        x[i] = (uint8_t)(v >> (8 * i));
    buf_put(b, x, 8);
}

size_t varint_encode(uint64_t v, uint8_t *out)
{
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

void buf_put_varint(struct buf *b, uint64_t v)
{
    uint8_t x[10];
    buf_put(b, x, varint_encode(v, x));
}

void buf_put_svarint(struct buf *b, int64_t v)
{
    /* zigzag: small magnitudes of either sign stay short */
    buf_put_varint(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void buf_put_bytes(struct buf *b, const void *p, size_t n)
{
    buf_put_varint(b, n);
    buf_put(b, p, n);
}

void buf_put_str(struct buf *b, const char *s)
{
    buf_put_bytes(b, s, strlen(s));
}

void cur_init(struct cur *c, const void *p, size_t n)
{
    c->p = p;
    c->end = c->p + n;
    c->err = NULL;
}

size_t cur_left(const struct cur *c)
{
    return (size_t)(c->end - c->p);
}

static int need(struct cur *c, size_t n)
{
    if (c->err)
        return 0;
    if (cur_left(c) < n) {
        c->err = "unexpected end of data";
        return 0;
    }
    return 1;
}

uint8_t cur_u8(struct cur *c)
{
    if (!need(c, 1))
        return 0;
    return *c->p++;
}

uint16_t cur_u16le(struct cur *c)
{
    if (!need(c, 2))
        return 0;
    uint16_t v = (uint16_t)(c->p[0] | (c->p[1] << 8));
    c->p += 2;
    return v;
}

uint32_t cur_u32le(struct cur *c)
{
    if (!need(c, 4))
        return 0;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)c->p[i] << (8 * i);
    c->p += 4;
    return v;
}

uint64_t cur_u64le(struct cur *c)
{
    if (!need(c, 8))
        return 0;
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)c->p[i] << (8 * i);
    c->p += 8;
    return v;
}

uint64_t cur_varint(struct cur *c)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (!need(c, 1))
            return 0;
        uint8_t byte = *c->p++;
        if (shift == 63 && byte > 1) {
            c->err = "varint overflows 64 bits";
            return 0;
        }
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            return v;
    }
    c->err = "varint longer than 10 bytes";
    return 0;
}

int64_t cur_svarint(struct cur *c)
{
    uint64_t u = cur_varint(c);
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

const uint8_t *cur_skip(struct cur *c, size_t n)
{
    if (!need(c, n))
        return NULL;
    const uint8_t *p = c->p;
    c->p += n;
    return p;
}

const uint8_t *cur_bytes(struct cur *c, size_t *n)
{
    uint64_t len = cur_varint(c);
    *n = 0;
    if (c->err)
        return NULL;
    if (len > cur_left(c)) {
        c->err = "string longer than its record";
        return NULL;
    }
    *n = (size_t)len;
    return cur_skip(c, (size_t)len);
}
