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
    long gc = rec_event_index(r, "gc"), pause = rec_event_index(r, "gc-pause");
    for (size_t i = 0; i < r->record_count; i++)
        if (r->records[i].time > t->run_ns)
            t->run_ns = r->records[i].time;
    for (size_t i = 0; i < r->sample_count; i++)
        if (r->samples[i].time > t->run_ns)
            t->run_ns = r->samples[i].time;
    if (gc < 0 || !r->events[gc].recorded)
        return 0;
    static const char *const names[] = {"number", "generation", "reason", "kind", "compacting",
                                        "start", "gen0", "gen1", "gen2", "loh", "poh",
                                        "promoted", "pinned_objects"};
    long f[13];
    for (int k = 0; k < 13; k++)
        f[k] = rec_field_index(&r->events[gc], names[k]);
    size_t cap = 0, pause_cap = 0;
    for (size_t i = 0; i < r->record_count; i++) {
        const struct rec_record *x = &r->records[i];
        if ((long)x->event != gc)
            continue;
        const uint64_t *v = rec_values(r, x), *fs = rec_fields(r, x);
#define FIELD(k) (f[k] >= 0 ? fs[f[k]] : 0)
        struct gc_row row = {FIELD(0), FIELD(1), FIELD(2), FIELD(3), f[4] >= 0 ? fs[f[4]] : 2,
                             FIELD(5), v[0], 0, 0,
                             {FIELD(6), FIELD(7), FIELD(8), FIELD(9), FIELD(10)},
                             FIELD(11), FIELD(12)};
#undef FIELD
        if (row.start < from || (to && row.start >= to))
            continue;
        struct gc_row *grown = mem_grow(t->rows, &cap, t->count + 1, sizeof *grown);
        if (!grown)
            goto oom;
        t->rows = grown;
        t->rows[t->count++] = row;
    }
    qsort(t->rows, t->count, sizeof *t->rows, by_number);
    if (pause >= 0 && r->events[pause].recorded) {
        long ps = rec_field_index(&r->events[pause], "start"),
             pr = rec_field_index(&r->events[pause], "reason"),
             pg = rec_field_index(&r->events[pause], "gc");
        for (size_t i = 0; i < r->record_count; i++) {
            const struct rec_record *x = &r->records[i];
            if ((long)x->event != pause || ps < 0)
                continue;
            const uint64_t *fs = rec_fields(r, x);
            struct gc_pause p = {fs[ps], rec_values(r, x)[0], pr >= 0 ? fs[pr] : 0,
                                 pg >= 0 ? fs[pg] : 0};
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
            struct gc_row *row = p.gc ? bsearch(&key, t->rows, t->count, sizeof *t->rows,
                                                by_number)
                                      : NULL;
            if (row) {
                row->pause += p.duration;
                row->pauses++;
            }
        }
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
