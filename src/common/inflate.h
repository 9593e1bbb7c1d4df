/*
 * inflate: a raw DEFLATE (RFC 1951) decoder, for the portable PDBs that
 * compilers embed in assemblies (the PE debug directory's type-17 entry:
 * "MPDB", the uncompressed size, then raw deflate).
 *
 * Written from the RFC, in the shape of a reference decoder: canonical
 * Huffman codes decoded one bit at a time, into a buffer whose size the
 * caller knows in advance.  Simple rather than fast (tens of MB/s, for
 * PDBs of a few hundred KB); it never reads or writes outside the buffers
 * it is given, whatever the input, and needs no allocation, so the agent
 * can use it without a zlib dependency.
 */
#ifndef CORSCOPE_INFLATE_H
#define CORSCOPE_INFLATE_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"

/* Decompresses the raw deflate stream in[0..in_len) into out[0..out_size).
 * Returns 0 when the stream's last block ended, with *produced the bytes
 * written; -1 for a malformed stream, a stream that runs past in_len, or
 * output that does not fit in out_size (*produced then says how far it
 * got).  *why (when not NULL) gets a static reason on failure. */
HIDDEN int inflate_raw(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_size,
                       size_t *produced, const char **why);

#endif
