/*
 * buf: growable byte buffers for encoding, and bounded cursors for decoding.
 *
 * The recording format is made of LEB128 varints, fixed little-endian
 * integers and length-prefixed byte strings.  Writers append into a `buf`;
 * readers walk a `cur` over bytes they do not trust: every get_* checks the
 * remaining length and sets `cur.err` instead of reading past the end, so a
 * decoder can run a whole record and test the error once.
 *
 * A buf whose allocation failed stays usable: it sets `failed`, drops
 * further appends and the owner checks `failed` when it matters.
 */
#ifndef CORSCOPE_BUF_H
#define CORSCOPE_BUF_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"

struct buf {
    uint8_t *data;
    size_t len;
    size_t cap;
    int failed;
};

HIDDEN void buf_init(struct buf *b);
HIDDEN void buf_free(struct buf *b);
HIDDEN void buf_reset(struct buf *b);
/* Makes room for `n` more bytes; returns 0, or -1 (and sets failed). */
HIDDEN int buf_reserve(struct buf *b, size_t n);
HIDDEN void buf_put(struct buf *b, const void *p, size_t n);
HIDDEN void buf_put_u8(struct buf *b, uint8_t v);
HIDDEN void buf_put_u16le(struct buf *b, uint16_t v);
HIDDEN void buf_put_u32le(struct buf *b, uint32_t v);
HIDDEN void buf_put_u64le(struct buf *b, uint64_t v);
HIDDEN void buf_put_varint(struct buf *b, uint64_t v);
HIDDEN void buf_put_svarint(struct buf *b, int64_t v);
/* varint length followed by the bytes */
HIDDEN void buf_put_bytes(struct buf *b, const void *p, size_t n);
HIDDEN void buf_put_str(struct buf *b, const char *s);

/* Encodes v as LEB128 into out (at least 10 bytes); returns the length. */
HIDDEN size_t varint_encode(uint64_t v, uint8_t *out);

struct cur {
    const uint8_t *p;
    const uint8_t *end;
    const char *err; /* first error, NULL while all reads succeeded */
};

HIDDEN void cur_init(struct cur *c, const void *p, size_t n);
HIDDEN size_t cur_left(const struct cur *c);
HIDDEN uint8_t cur_u8(struct cur *c);
HIDDEN uint16_t cur_u16le(struct cur *c);
HIDDEN uint32_t cur_u32le(struct cur *c);
HIDDEN uint64_t cur_u64le(struct cur *c);
HIDDEN uint64_t cur_varint(struct cur *c);
HIDDEN int64_t cur_svarint(struct cur *c);
/* A varint length and that many bytes; *n receives the length.  Returns a
 * pointer into the input, or NULL on error. */
HIDDEN const uint8_t *cur_bytes(struct cur *c, size_t *n);
HIDDEN const uint8_t *cur_skip(struct cur *c, size_t n);

#endif
