/*
 * procmaps: /proc/self/maps read whole and parsed line by line, the one
 * reader of that file in the agent.  The kernel formats a line for each
 * mapping at every read, a few microseconds each (a .NET process has a few
 * hundred): the file is read with large read()s into one buffer rather
 * than through stdio's 4 KB ones, each read is counted (the recording's
 * maps_reads), and where the kernel answers one address at a time the
 * agent asks that instead (agent/signal/vma_query.h).
 */
#ifndef CORSCOPE_PROCMAPS_H
#define CORSCOPE_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"

/* One line: "start-end perms offset dev inode   path". */
struct procmaps_line {
    uintptr_t start, end;
    char perms[5];    /* "r-xp" */
    const char *path; /* the rest of the line, leading blanks skipped; not terminated */
    size_t path_len;  /* 0: no path */
};

/* Parses the line [line, end) (no newline).  Returns 1, or 0 when it is
 * not a maps line (then *out is not to be used). */
HIDDEN int procmaps_parse(const char *line, const char *end, struct procmaps_line *out);

/* Calls fn for each well-formed line of text[0..len) (malformed ones are
 * skipped); stops at fn's first non-zero answer and returns it, else 0. */
HIDDEN int procmaps_each(const char *text, size_t len,
                         int (*fn)(void *ctx, const struct procmaps_line *line), void *ctx);

/* Reads /proc/self/maps whole and calls procmaps_each on it.  Returns fn's
 * answer, or -1 when the file cannot be read (memory, descriptors). */
HIDDEN int procmaps_read_self(int (*fn)(void *ctx, const struct procmaps_line *line), void *ctx);

/* How many times the file was read: by procmaps_read_self, and by others
 * that said so (procmaps_count_read: glibc reads it to place the main
 * thread's stack). */
HIDDEN uint64_t procmaps_reads(void);
HIDDEN void procmaps_count_read(void);

#endif
