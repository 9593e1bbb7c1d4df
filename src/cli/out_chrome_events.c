/*
 * out_chrome_events: the runtime's events in the Chrome trace, beside the
 * samples: a second process ("runtime events") with a track per thread
 * holding the thread's life (from its start to its end, or the end of the
 * recording), its lock waits, compilations and loads as slices, and its
 * throws and new names as instants.  Slices of one thread are nested the
 * way the viewers require (a load inside a compile); times are measured
 * on the thread, so a slice that would cross its parent's end is ended
 * there.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/event_table.h"
#include "cli/json.h"
#include "cli/timeline.h"
#include "common/mem.h"

enum kind { LIFE, LOCK, JIT, LOAD, THROW, NAME };

struct item {
    uint32_t thread; /* index */
    enum kind kind;
    uint64_t start, end; /* ns since the start; an instant has start == end */
    const struct rec_record *record;
};

static int by_thread_then_time(const void *a, const void *b)
{
    const struct item *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1; /* the longer one is the parent */
    return x->kind < y->kind ? -1 : x->kind > y->kind;
}

struct items {
    struct item *v;
    size_t n, cap;
    int failed;
};

static void add(struct items *it, uint32_t thread, enum kind kind, uint64_t start, uint64_t end,
                const struct rec_record *x)
{
    struct item *grown = mem_grow(it->v, &it->cap, it->n + 1, sizeof *grown);
    if (!grown) {
        it->failed = 1;
        return;
    }
    it->v = grown;
    struct item i = {thread, kind, start, end, x};
    it->v[it->n++] = i;
}

/* Slices (or instants) of one event: a record's time is its end, its
 * value `duration` its duration (-1: an instant).  Lock's totals of short
 * waits are left out. */
static void collect(const struct profile *p, struct items *it, enum fmt_ev ev, enum kind kind,
                    int duration)
{
    struct event_table e;
    if (event_table_open(&e, p, NULL, ev) < 0 || e.event < 0) {
        event_table_close(&e);
        return;
    }
    for (const struct rec_record *x = event_table_next(&e, NULL); x; x = event_table_next(&e, x)) {
        if (!x->thread || x->thread > p->rec->thread_count ||
            (ev == FMT_EV_LOCK && event_table_get(&e, x, FMT_LOCK_BELOW_MIN)))
            continue;
        uint64_t ns = duration < 0 ? 0 : event_table_value(&e, x, (unsigned)duration);
        add(it, x->thread - 1, kind, ns < x->time ? x->time - ns : 0, x->time, x);
    }
    event_table_close(&e);
}

/* The events, opened once, by kind. */
static const enum fmt_ev event_of[] = {FMT_EV_THREAD, FMT_EV_LOCK,       FMT_EV_JIT,
                                       FMT_EV_LOADS,  FMT_EV_EXCEPTIONS, FMT_EV_THREAD};
#define KINDS (sizeof event_of / sizeof event_of[0])

static void name_of(struct event_table *events, const struct item *i, char *out, size_t size)
{
    struct event_table *ev = &events[i->kind];
    out[0] = '\0';
    if (ev->event < 0)
        return;
    struct event_table e = *ev;
    char text[256];
    switch (i->kind) {
    case LIFE:
        snprintf(out, size, "thread");
        break;
    case LOCK: {
        char owner[160];
        event_table_thread_id_name(&e, event_table_get(&e, i->record, FMT_LOCK_OWNER), owner,
                                   sizeof owner);
        snprintf(out, size, "lock wait (held by %s)", owner);
        break;
    }
    case JIT: {
        static const char *const tiers[] = {"", "", " minopts", " optimized", " tier0", " tier1",
                                            " OSR", " tier0 instrumented",
                                            " tier1 instrumented"};
        uint64_t tier = event_table_get(&e, i->record, FMT_JIT_TIER);
        snprintf(out, size, "JIT%s %s", tier < sizeof tiers / sizeof tiers[0] ? tiers[tier] : "",
                 event_table_frame_name(&e, event_table_get(&e, i->record, FMT_JIT_METHOD)));
        break;
    }
    case LOAD:
        snprintf(out, size, "load %s %s",
                 event_table_get(&e, i->record, FMT_LOADS_KIND) == 1 ? "assembly" : "module",
                 event_table_string(&e, event_table_get(&e, i->record, FMT_LOADS_NAME), text,
                                    sizeof text));
        break;
    case THROW:
        snprintf(out, size, "throw %s",
                 event_table_string(&e, event_table_get(&e, i->record, FMT_EXCEPTIONS_TYPE), text,
                                    sizeof text));
        break;
    case NAME:
        snprintf(out, size, "named %s",
                 event_table_string(&e, event_table_get(&e, i->record, FMT_THREAD_NAME), text,
                                    sizeof text));
        break;
    }
}

static const char *const categories[] = {"thread", "lock", "jit", "load", "exception", "thread"};

int chrome_runtime_events(const struct profile *p, FILE *out, int *first)
{
    const struct recording *r = p->rec;
    struct items it = {NULL, 0, 0, 0};
    uint64_t end_of_recording = event_table_duration(r);
    /* the threads' lives */
    struct event_table life;
    if (event_table_open(&life, p, NULL, FMT_EV_THREAD) < 0)
        return -1;
    if (life.event >= 0) {
        uint64_t *start = mem_calloc(r->thread_count ? r->thread_count : 1, sizeof *start);
        uint64_t *end = mem_calloc(r->thread_count ? r->thread_count : 1, sizeof *end);
        for (size_t t = 0; start && end && t < r->thread_count; t++)
            start[t] = end[t] = UINT64_MAX;
        for (const struct rec_record *x = event_table_next(&life, NULL); start && end && x;
             x = event_table_next(&life, x)) {
            if (!x->thread || x->thread > r->thread_count)
                continue;
            uint64_t what = event_table_get(&life, x, FMT_THREAD_WHAT);
            if (what == FMT_WHAT_START)
                start[x->thread - 1] = x->time;
            else if (what == FMT_WHAT_END)
                end[x->thread - 1] = x->time;
            else if (what == FMT_WHAT_NAME)
                add(&it, x->thread - 1, NAME, x->time, x->time, x);
        }
        for (size_t t = 0; start && end && t < r->thread_count; t++) {
            if (start[t] == UINT64_MAX && end[t] == UINT64_MAX)
                continue;
            uint64_t s = start[t] == UINT64_MAX ? 0 : start[t];
            uint64_t e = end[t] == UINT64_MAX ? end_of_recording : end[t];
            add(&it, (uint32_t)t, LIFE, s, e > s ? e : s, NULL);
        }
        if (!start || !end)
            it.failed = 1;
        mem_free(start);
        mem_free(end);
    }
    event_table_close(&life);
    collect(p, &it, FMT_EV_LOCK, LOCK, FMT_LOCK_WAIT);
    collect(p, &it, FMT_EV_JIT, JIT, FMT_JIT_COMPILE);
    collect(p, &it, FMT_EV_LOADS, LOAD, FMT_LOADS_LOAD);
    collect(p, &it, FMT_EV_EXCEPTIONS, THROW, -1);
    if (it.failed) {
        mem_free(it.v);
        return -1;
    }
    if (!it.n)
        return 0;
    qsort(it.v, it.n, sizeof *it.v, by_thread_then_time);

    struct event_table events[KINDS];
    int opened = 0;
    for (size_t k = 0; k < KINDS; k++)
        if (event_table_open(&events[k], p, NULL, event_of[k]) == 0)
            opened++;
    if (opened < (int)KINDS) {
        for (size_t k = 0; k < KINDS; k++)
            event_table_close(&events[k]);
        mem_free(it.v);
        return -1;
    }
    fputs(*first ? "\n" : ",\n", out);
    *first = 0;
    fputs("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":2,\"args\":{\"name\":\"runtime events\"}}",
          out);
    uint64_t open_end[64];
    size_t depth = 0;
    uint32_t thread = UINT32_MAX;
    for (size_t k = 0; k < it.n; k++) {
        struct item *i = &it.v[k];
        uint64_t tid = r->threads[i->thread].os_tid;
        if (i->thread != thread) {
            thread = i->thread;
            depth = 0;
            char name[160];
            timeline_thread_name(p, thread, name, sizeof name);
            fprintf(out, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":2,\"tid\":%llu,"
                         "\"args\":{\"name\":",
                    (unsigned long long)tid);
            json_string(out, name);
            fputs("}}", out);
        }
        char name[600];
        name_of(events, i, name, sizeof name);
        if (i->start == i->end && i->kind != LIFE) {
            fprintf(out, ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":2,\"tid\":%llu,\"ts\":%.3f,\"cat\":\"%s\",\"name\":",
                    (unsigned long long)tid, (double)i->start / 1e3, categories[i->kind]);
            json_string(out, name);
            fputs("}", out);
            continue;
        }
        /* nested in the slices still open at its start, never past their end */
        while (depth && open_end[depth - 1] <= i->start)
            depth--;
        uint64_t end = i->end;
        if (depth && end > open_end[depth - 1])
            end = open_end[depth - 1];
        if (depth < sizeof open_end / sizeof open_end[0])
            open_end[depth++] = end;
        fprintf(out, ",\n{\"ph\":\"X\",\"pid\":2,\"tid\":%llu,\"ts\":%.3f,\"dur\":%.3f,\"cat\":\"%s\",\"name\":",
                (unsigned long long)tid, (double)i->start / 1e3,
                (double)(end > i->start ? end - i->start : 1) / 1e3, categories[i->kind]);
        json_string(out, name);
        fputs("}", out);
    }
    for (size_t k = 0; k < KINDS; k++)
        event_table_close(&events[k]);
    mem_free(it.v);
    return 0;
}
