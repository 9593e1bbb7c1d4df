/*
 * live: see live.h.
 */
#include "cli/live.h"

#include <stdio.h>
#include <string.h>

#include "common/map.h"
#include "common/mem.h"

struct fields {
    long event;
    long f[3];
};

static int find(const struct recording *r, const char *event, const char *const names[3],
                struct fields *out)
{
    out->event = rec_event_index(r, event);
    if (out->event < 0 || !r->events[out->event].recorded)
        return -1;
    for (int i = 0; i < 3; i++) {
        out->f[i] = names[i] ? rec_field_index(&r->events[out->event], names[i]) : -1;
        if (names[i] && out->f[i] < 0)
            return -1;
    }
    return 0;
}

int live_derive(struct recording *r, uint64_t at_ns, char *note, size_t note_size)
{
    note[0] = '\0';
    static const char *const alloc_names[3] = {"object", NULL, NULL};
    static const char *const scan_names[3] = {"as_of", "allocated_before", NULL};
    static const char *const collected_names[3] = {"object", "by", NULL};
    struct fields alloc, scan, collected;
    if (find(r, "alloc", alloc_names, &alloc) < 0 || find(r, "live-scan", scan_names, &scan) < 0 ||
        find(r, "collected", collected_names, &collected) < 0 || rec_event_index(r, "live") >= 0 ||
        r->event_count >= 255)
        return 0;
    if (r->events[alloc.event].value_count < 2)
        return 0;
    /* the look the live set is taken at */
    const struct rec_record *chosen = NULL;
    uint64_t as_of = 0, before = 0;
    for (size_t i = 0; i < r->record_count; i++) {
        const struct rec_record *x = &r->records[i];
        if ((long)x->event != scan.event)
            continue;
        const uint64_t *f = rec_fields(r, x);
        uint64_t when = f[scan.f[0]] ? f[scan.f[0]] : x->time;
        if (when > at_ns)
            continue;
        if (!chosen || f[scan.f[0]] >= as_of) {
            chosen = x;
            as_of = f[scan.f[0]];
            before = f[scan.f[1]];
        }
    }
    if (!chosen) {
        snprintf(note, note_size,
                 "live: no look at the heap %s; the view is empty",
                 at_ns == UINT64_MAX ? "was recorded" : "before that time");
    }
    uint64_t cutoff = as_of && as_of < before ? as_of : before;
    /* the objects collected by then */
    struct map64 gone;
    map64_init(&gone);
    int rc = -1;
    for (size_t i = 0; chosen && as_of && i < r->record_count; i++) {
        const struct rec_record *x = &r->records[i];
        if ((long)x->event != collected.event)
            continue;
        const uint64_t *f = rec_fields(r, x);
        if (f[collected.f[1]] <= as_of && map64_put(&gone, f[collected.f[0]], 1) < 0)
            goto out;
    }
    /* the event */
    struct rec_event *grown_events = mem_grow(r->events, &r->event_cap, r->event_count + 1,
                                              sizeof *r->events);
    if (!grown_events)
        goto out;
    r->events = grown_events;
    struct rec_event *ev = &r->events[r->event_count];
    memset(ev, 0, sizeof *ev);
    static const char name[] = "live", space[] = "inuse_space", objects[] = "inuse_objects",
                      bytes[] = "bytes", objs[] = "objects";
    ev->id = 0;
    ev->name = (struct rec_str){name, sizeof name - 1};
    ev->unit = (struct rec_str){bytes, sizeof bytes - 1};
    ev->period = 1;
    ev->recorded = 1;
    ev->value_count = 2;
    ev->value_names[0] = (struct rec_str){space, sizeof space - 1};
    ev->value_units[0] = ev->unit;
    ev->value_names[1] = (struct rec_str){objects, sizeof objects - 1};
    ev->value_units[1] = (struct rec_str){objs, sizeof objs - 1};
    uint32_t live_event = (uint32_t)r->event_count++;
    uint64_t count = 0, weight = 0;
    for (size_t i = 0; chosen && i < r->record_count; i++) {
        const struct rec_record *x = &r->records[i];
        if ((long)x->event != alloc.event || !x->stack || !x->thread || x->time > cutoff)
            continue;
        uint64_t id = rec_fields(r, x)[alloc.f[0]];
        uint32_t dummy;
        if (!id || map64_get(&gone, id, &dummy))
            continue;
        struct rec_sample *grown = mem_grow(r->samples, &r->sample_cap, r->sample_count + 1,
                                            sizeof *r->samples);
        if (!grown)
            goto out;
        r->samples = grown;
        const uint64_t *v = rec_values(r, x);
        struct rec_sample s = {x->time, v[0], v[1], x->stack, x->thread - 1, live_event};
        r->samples[r->sample_count++] = s;
        count++;
        weight += v[0];
    }
    if (chosen && as_of)
        snprintf(note, note_size,
                 "live: %llu sampled allocations still alive at the collection that ended at "
                 "%.3f s (%.1f MiB); newer allocations are not judged yet",
                 (unsigned long long)count, (double)as_of / 1e9, (double)weight / 1048576.0);
    else if (chosen)
        snprintf(note, note_size,
                 "live: no collection ran %s, so no allocation was ever found dead: all %llu "
                 "followed allocations count as live",
                 at_ns == UINT64_MAX ? "in the run" : "by then", (unsigned long long)count);
    rc = 0;
out:
    map64_free(&gone);
    return rc;
}
