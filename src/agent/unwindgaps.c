/*
 * unwindgaps: what the native unwinder could not follow, written into the
 * recording at its end, so that `check` can say why native frames ended
 * walks: per library, the functions whose DWARF the parser turned into rows
 * the walker stops at (expressions, other registers, unreadable CIE
 * augmentations ...; cfi.h counts them), how many walks stopped there, and
 * libraries with no .eh_frame_hdr at all, whether their CFI is in
 * .debug_frame (which no unwinder in a running process reads) or nowhere.
 * Runs on the agent's thread, at the end; it reads library files.
 */
#include "agent/unwindgaps.h"

#include <stdio.h>
#include <string.h>

#include "agent/elfsym.h"
#include "agent/signal/cfi.h"
#include "agent/signal/nativeunwind.h"
#include "common/mem.h"
#include "format/format.h"

/* The INFO value stays within what a string record holds comfortably;
 * libraries past it are left out (counted in the last line). */
#define GAPS_MAX_BYTES (64u << 10)

struct gaps_text {
    char *buf;
    size_t len, cap;
    unsigned left_out;
};

static const char *const gap_keys[] = {
#define GAP_KEY(name, key, what) key,
    FMT_UNWIND_GAPS(GAP_KEY)
#undef GAP_KEY
};

static void add(struct gaps_text *t, const char *fmt_text)
{
    size_t n = strlen(fmt_text);
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 1024;
        while (t->len + n + 1 > cap)
            cap *= 2;
        char *grown = mem_realloc(t->buf, cap);
        if (!grown)
            return;
        t->buf = grown;
        t->cap = cap;
    }
    memcpy(t->buf + t->len, fmt_text, n + 1);
    t->len += n;
}

static void one_library(void *ctx, const char *path, const struct cfi_gaps *gaps, uint32_t walks,
                        int no_eh_frame)
{
    struct gaps_text *t = ctx;
    if (t->len > GAPS_MAX_BYTES) {
        t->left_out++;
        return;
    }
    char line[1536], part[96];
    snprintf(line, sizeof line, "%s%s\t", t->len ? "\n" : "", path[0] ? path : "[program]");
    if (no_eh_frame) {
        snprintf(part, sizeof part, "%s=1 %s=%u", FMT_UNWIND_NO_EH_FRAME, FMT_UNWIND_WALKS_THROUGH,
                 walks);
        strncat(line, part, sizeof line - strlen(line) - 1);
        if (path[0] && elfsym_has_section(path, ".debug_frame") == 1) {
            snprintf(part, sizeof part, " %s=1", FMT_UNWIND_DEBUG_FRAME);
            strncat(line, part, sizeof line - strlen(line) - 1);
        }
    } else {
        snprintf(part, sizeof part, "%s=%u %s=%u", FMT_UNWIND_FUNCTIONS, gaps->functions,
                 FMT_UNWIND_WALKS_STOPPED, walks);
        strncat(line, part, sizeof line - strlen(line) - 1);
        for (int g = 0; g < CFI_GAP_COUNT; g++) {
            if (!gaps->n[g])
                continue;
            snprintf(part, sizeof part, " %s=%u", gap_keys[g], gaps->n[g]);
            strncat(line, part, sizeof line - strlen(line) - 1);
        }
    }
    add(t, line);
}

void unwindgaps_record(struct recorder *out)
{
    struct gaps_text t = {NULL, 0, 0, 0};
    nativeunwind_gaps(one_library, &t);
    if (t.left_out) {
        char line[96];
        snprintf(line, sizeof line, "\n[%u more libraries]\t", t.left_out);
        add(&t, line);
    }
    if (t.len)
        recorder_info(out, FMT_INFO_UNWIND_GAPS, t.buf);
    mem_free(t.buf);
}
