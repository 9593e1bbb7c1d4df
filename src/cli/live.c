/*
 * live: see live.h.
 */
#include "cli/live.h"

#include <stdio.h>
#include <string.h>

#include "common/map.h"

/* Does the recording have event ev with these of its fields and values? */
static int has(const struct recording *r, enum fmt_ev ev, const int *fields, size_t n_fields,
               const int *values, size_t n_values)
{
    if (rec_event_of(r, ev) < 0)
        return 0;
    for (size_t i = 0; i < n_fields; i++)
        if (rec_field_of(r, ev, (unsigned)fields[i]) < 0)
            return 0;
    for (size_t i = 0; i < n_values; i++)
        if (rec_value_of(r, ev, (unsigned)values[i]) < 0)
            return 0;
    return 1;
}

int live_derive(struct recording *r, uint64_t at_ns, char *note, size_t note_size)
{
    note[0] = '\0';
    static const int alloc_fields[] = {FMT_ALLOC_OBJECT};
    static const int alloc_values[] = {FMT_ALLOC_SPACE, FMT_ALLOC_OBJECTS};
    static const int scan_fields[] = {FMT_LIVE_SCAN_AS_OF, FMT_LIVE_SCAN_ALLOCATED_BEFORE};
    static const int collected_fields[] = {FMT_COLLECTED_OBJECT, FMT_COLLECTED_BY};
    if (!has(r, FMT_EV_ALLOC, alloc_fields, 1, alloc_values, 2) ||
        !has(r, FMT_EV_LIVE_SCAN, scan_fields, 2, NULL, 0) ||
        !has(r, FMT_EV_COLLECTED, collected_fields, 2, NULL, 0) ||
        rec_event_of(r, FMT_EV_LIVE) >= 0 || r->event_count >= 255)
        return 0;
    long alloc = rec_event_of(r, FMT_EV_ALLOC), scan = rec_event_of(r, FMT_EV_LIVE_SCAN),
         collected = rec_event_of(r, FMT_EV_COLLECTED);
    /* the look the live set is taken at */
    const struct rec_record *chosen = NULL;
    uint64_t as_of = 0, before = 0;
    for (size_t i = 0; i < r->record_count; i++) {
        const struct rec_record *x = &r->records[i];
        if ((long)x->event != scan)
            continue;
        uint64_t look_as_of = rec_field(r, x, FMT_EV_LIVE_SCAN, FMT_LIVE_SCAN_AS_OF);
        uint64_t when = look_as_of ? look_as_of : x->time;
        if (when > at_ns)
            continue;
        if (!chosen || look_as_of >= as_of) {
            chosen = x;
            as_of = look_as_of;
            before = rec_field(r, x, FMT_EV_LIVE_SCAN, FMT_LIVE_SCAN_ALLOCATED_BEFORE);
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
        if ((long)x->event != collected ||
            rec_field(r, x, FMT_EV_COLLECTED, FMT_COLLECTED_BY) > as_of)
            continue;
        if (map64_put(&gone, rec_field(r, x, FMT_EV_COLLECTED, FMT_COLLECTED_OBJECT), 1) < 0)
            goto out;
    }
    /* the event */
    long live_event = rec_add_schema_event(r, FMT_EV_LIVE);
    if (live_event < 0)
        goto out;
    uint64_t count = 0, weight = 0;
    for (size_t i = 0; chosen && i < r->record_count; i++) {
        const struct rec_record *x = &r->records[i];
        if ((long)x->event != alloc || !x->stack || !x->thread || x->time > cutoff)
            continue;
        uint64_t id = rec_field(r, x, FMT_EV_ALLOC, FMT_ALLOC_OBJECT);
        uint32_t dummy;
        if (!id || map64_get(&gone, id, &dummy))
            continue;
        uint64_t space = rec_value(r, x, FMT_EV_ALLOC, FMT_ALLOC_SPACE);
        struct rec_sample s = {x->time, space, rec_value(r, x, FMT_EV_ALLOC, FMT_ALLOC_OBJECTS),
                               x->stack, x->thread - 1, (uint32_t)live_event};
        if (rec_add_sample(r, s) < 0)
            goto out;
        count++;
        weight += space;
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
