/*
 * gc_table: see gc_table.h.
 */
#include "cli/gc_table.h"

#include <stdlib.h>
#include <string.h>

#include "common/mem.h"

static const char *const reasons[] = {
    "AllocSmall", "Induced", "LowMemory", "Empty", "AllocLarge", "OutOfSpaceSOH",
    "OutOfSpaceLOH", "InducedNotForced", "Internal", "InducedLowMemory", "InducedCompacting",
    "LowMemoryHost", "PMFullGC", "LowMemoryHostBlocking",
};

const char *gc_reason_name(uint64_t reason)
{
    return reason < sizeof reasons / sizeof reasons[0] ? reasons[reason] : "other";
}

const char *gc_kind_name(uint64_t kind)
{
    static const char *const kinds[] = {"blocking", "background", "foreground"};
    return kind < 3 ? kinds[kind] : "other";
}

const char *gc_suspend_reason_name(uint64_t reason)
{
    static const char *const names[] = {"Other", "GC", "AppDomainShutdown", "CodePitching",
                                        "Shutdown", "Debugger", "GCPrep", "DebuggerSweep"};
    return reason < sizeof names / sizeof names[0] ? names[reason] : "other";
}

static int by_number(const void *a, const void *b)
{
    const struct gc_row *x = a, *y = b;
    return x->number < y->number ? -1 : x->number > y->number;
}

static int by_start(const void *a, const void *b)
{
    const struct gc_pause *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

int gc_table_load(const struct recording *r, uint64_t from, uint64_t to, struct gc_table *t)
{
    memset(t, 0, sizeof *t);
    long gc = rec_event_of(r, FMT_EV_GC), pause = rec_event_of(r, FMT_EV_GC_PAUSE);
    for (size_t i = 0; i < r->record_count; i++)
        if (r->records[i].time > t->run_ns)
            t->run_ns = r->records[i].time;
    for (size_t i = 0; i < r->sample_count; i++)
        if (r->samples[i].time > t->run_ns)
            t->run_ns = r->samples[i].time;
    if (gc < 0)
        return 0;
    int has_compacting = rec_field_of(r, FMT_EV_GC, FMT_GC_COMPACTING) >= 0;
    size_t cap = 0, pause_cap = 0;
    for (size_t i = 0; i < r->record_count; i++) {
        const struct rec_record *x = &r->records[i];
        if ((long)x->event != gc)
            continue;
#define FIELD(f) rec_field(r, x, FMT_EV_GC, FMT_GC_##f)
        struct gc_row row = {FIELD(NUMBER), FIELD(GENERATION), FIELD(REASON), FIELD(KIND),
                             has_compacting ? FIELD(COMPACTING) : 2,
                             FIELD(START), rec_value(r, x, FMT_EV_GC, FMT_GC_DURATION), 0, 0,
                             {FIELD(GEN0), FIELD(GEN1), FIELD(GEN2), FIELD(LOH), FIELD(POH)},
                             FIELD(PROMOTED), FIELD(PINNED_OBJECTS)};
#undef FIELD
        if (row.start < from || (to && row.start >= to))
            continue;
        struct gc_row *grown = mem_grow(t->rows, &cap, t->count + 1, sizeof *grown);
        if (!grown)
            goto oom;
        t->rows = grown;
        t->rows[t->count++] = row;
    }
    if (t->count) /* (none: rows is NULL, which qsort must not be given) */
        qsort(t->rows, t->count, sizeof *t->rows, by_number);
    if (pause >= 0 && rec_field_of(r, FMT_EV_GC_PAUSE, FMT_GC_PAUSE_START) >= 0) {
        for (size_t i = 0; i < r->record_count; i++) {
            const struct rec_record *x = &r->records[i];
            if ((long)x->event != pause)
                continue;
            struct gc_pause p = {rec_field(r, x, FMT_EV_GC_PAUSE, FMT_GC_PAUSE_START),
                                 rec_value(r, x, FMT_EV_GC_PAUSE, FMT_GC_PAUSE_PAUSE),
                                 rec_field(r, x, FMT_EV_GC_PAUSE, FMT_GC_PAUSE_REASON),
                                 rec_field(r, x, FMT_EV_GC_PAUSE, FMT_GC_PAUSE_GC)};
            if (p.start < from || (to && p.start >= to))
                continue;
            struct gc_pause *grown = mem_grow(t->pauses, &pause_cap, t->pause_count + 1,
                                              sizeof *grown);
            if (!grown)
                goto oom;
            t->pauses = grown;
            t->pauses[t->pause_count++] = p;
            struct gc_row key = {0};
            key.number = p.gc;
            struct gc_row *row =
                p.gc && t->count ? bsearch(&key, t->rows, t->count, sizeof *t->rows, by_number)
                                 : NULL;
            if (row) {
                row->pause += p.duration;
                row->pauses++;
            }
        }
        if (t->pause_count)
            qsort(t->pauses, t->pause_count, sizeof *t->pauses, by_start);
    }
    return 1;
oom:
    gc_table_free(t);
    return -1;
}

void gc_table_free(struct gc_table *t)
{
    mem_free(t->rows);
    mem_free(t->pauses);
    memset(t, 0, sizeof *t);
}
