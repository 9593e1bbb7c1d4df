/*
 * format: the constants of the corscope recording format (docs/format.md).
 *
 * A recording is a 32-byte self-checking header followed by chunks.  Each
 * chunk is a 16-byte header (tag, payload length, record count, CRC-32 of
 * the payload) and a payload of records made of varints and length-prefixed
 * strings.  Tables (strings, frames, stacks, threads) are append-only and
 * deduplicated by the writer; a record may only refer to ids defined by an
 * earlier record, so everything before the last whole chunk stays readable
 * when the process dies mid-write.  A final TRLR chunk marks a recording
 * that was closed properly.
 *
 * This header is shared by the writer (in the agent) and the reader (in the
 * CLI); the numbers here are the file format and never change meaning within
 * a major version.
 */
#ifndef CORSCOPE_FORMAT_H
#define CORSCOPE_FORMAT_H

#include <stdint.h>

#define FMT_MAGIC "\x89" "CSC\r\n\x1a\n"
#define FMT_MAGIC_LEN 8
#define FMT_VERSION_MAJOR 1
#define FMT_VERSION_MINOR 0
#define FMT_BYTE_ORDER_MARK 0x01020304u
#define FMT_HEADER_SIZE 32
#define FMT_CHUNK_HEADER_SIZE 16
/* The reader refuses larger chunks: the writer never makes one above a few
 * hundred KiB, and a corrupt length must not become a huge allocation. */
#define FMT_MAX_CHUNK_PAYLOAD (16u << 20)
/* Deepest stack a recording may hold; deeper stacks are cut by the agent
 * and end in a [truncated] frame. */
#define FMT_MAX_STACK_DEPTH 65536

#define FMT_TAG(a, b, c, d) \
    ((uint32_t)(a) | ((uint32_t)(b) << 8) | ((uint32_t)(c) << 16) | ((uint32_t)(d) << 24))

/* Chunk tags, in the order a writer flushes them (definitions before use). */
enum fmt_chunk {
    FMT_CHUNK_INFO,
    FMT_CHUNK_EVENTS,
    FMT_CHUNK_STRINGS,
    FMT_CHUNK_FRAMES,
    FMT_CHUNK_STACKS,
    FMT_CHUNK_THREADS,
    FMT_CHUNK_SAMPLES,
    FMT_CHUNK_STATS,
    FMT_CHUNK_COUNT /* the trailer is written separately, last */
};

#define FMT_TAG_INFO FMT_TAG('I', 'N', 'F', 'O')
#define FMT_TAG_EVENTS FMT_TAG('E', 'V', 'N', 'T')
#define FMT_TAG_STRINGS FMT_TAG('S', 'T', 'R', 'S')
#define FMT_TAG_FRAMES FMT_TAG('F', 'R', 'M', 'S')
#define FMT_TAG_STACKS FMT_TAG('S', 'T', 'K', 'S')
#define FMT_TAG_THREADS FMT_TAG('T', 'H', 'R', 'D')
#define FMT_TAG_SAMPLES FMT_TAG('S', 'M', 'P', 'L')
#define FMT_TAG_STATS FMT_TAG('S', 'T', 'A', 'T')
#define FMT_TAG_TRAILER FMT_TAG('T', 'R', 'L', 'R')

/* What a frame is; decides how a report names and colours it. */
enum fmt_frame_kind {
    FMT_FRAME_MANAGED = 1,   /* type + method (+ generic arity) from metadata */
    FMT_FRAME_NATIVE = 2,    /* module + symbol, or module + offset */
    FMT_FRAME_RUNTIME = 3,   /* native code of the runtime itself (coreclr, clrjit) */
    FMT_FRAME_SYNTHETIC = 4, /* [unknown], [truncated], [native] ... */
    FMT_FRAME_KIND_MAX = 4
};

/* Well-known event ids.  An EVNT record gives each its name, unit and
 * period; the value of a sample is weight * period in that unit. */
enum fmt_event {
    FMT_EVENT_CPU = 1,
    FMT_EVENT_WALL = 2,
};

#endif
