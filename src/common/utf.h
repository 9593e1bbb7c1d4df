/*
 * utf: UTF-16 (the runtime's WCHAR strings) to UTF-8 (everything we write),
 * and back for the few strings we send the runtime (the diagnostics IPC).
 * Unpaired surrogates become U+FFFD, so a malformed name still produces
 * valid UTF-8 in every report.
 */
#ifndef CORSCOPE_UTF_H
#define CORSCOPE_UTF_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"

/* Converts up to `n` code units of `in` (stopping at a NUL) into `out`,
 * which receives at most size-1 bytes and a NUL; never splits a character.
 * Returns the number of bytes written, without the NUL. */
HIDDEN size_t utf16_to_utf8(const uint16_t *in, size_t n, char *out, size_t size);
/* Converts NUL-terminated UTF-8 into out (room code units, NUL included).
 * Returns the code units written without the NUL, or -1 when the text is
 * not valid UTF-8 or does not fit. */
HIDDEN long utf8_to_utf16(const char *in, uint16_t *out, size_t room);

#endif
