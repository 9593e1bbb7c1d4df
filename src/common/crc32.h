/*
 * crc32: the CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320) that
 * guards the recording's header and every chunk, so a reader can tell a
 * chunk that was cut short or damaged from one that is whole.  Table-driven,
 * no allocation; the table is computed at compile time by the macros below.
 */
#ifndef CORSCOPE_CRC32_H
#define CORSCOPE_CRC32_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"

/* crc32_update(0, p, n) is the CRC of p[0..n); pass a previous result to
 * continue over more bytes. */
HIDDEN uint32_t crc32_update(uint32_t crc, const void *p, size_t n);

#endif
