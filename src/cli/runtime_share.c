/*
 * runtime_share: see runtime_share.h.  Each distinct stack is classified once.
 */
#include "cli/runtime_share.h"

#include <string.h>

#include "common/mem.h"

enum { UNSEEN, PROGRAM, RUNTIME, NAMED };

static uint8_t classify(const struct recording *r, uint32_t stack)
{
    struct rec_stack s = r->stacks[stack];
    int runtime = 0, named = 0;
    for (uint32_t k = 0; k < s.depth; k++) {
        uint8_t kind = r->frames[r->stack_frames[s.offset + k]].kind;
        if (kind == FMT_FRAME_MANAGED)
            break;
        runtime |= kind == FMT_FRAME_RUNTIME || kind == FMT_FRAME_LABEL;
        named |= kind == FMT_FRAME_LABEL;
    }
    return named ? NAMED : runtime ? RUNTIME : PROGRAM;
}

int runtime_share_count(const struct recording *r, size_t event, struct runtime_share *out)
{
    memset(out, 0, sizeof *out);
    uint8_t *seen = mem_calloc(r->stack_count ? r->stack_count : 1, 1);
    if (!seen)
        return -1;
    for (size_t i = 0; i < r->sample_count; i++) {
        const struct rec_sample *s = &r->samples[i];
        if (s->event != event || s->stack >= r->stack_count)
            continue;
        if (!seen[s->stack])
            seen[s->stack] = classify(r, s->stack);
        out->samples += s->weight;
        if (seen[s->stack] >= RUNTIME)
            out->runtime += s->weight;
        if (seen[s->stack] == NAMED)
            out->named += s->weight;
    }
    mem_free(seen);
    return 0;
}
