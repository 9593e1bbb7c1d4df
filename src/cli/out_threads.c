/*
 * out_threads: `report -f threads`: every thread of the recording, with
 * when it started and ended (from the runtime's thread callbacks: managed
 * threads; others were there before or are not reported), its CPU time
 * (the kernel's per-thread clock, read when it ended or when the recording
 * ended), what was sampled on it, and the runtime events that happened on
 * it (throws, lock waits, JIT time); then the names threads had, in order.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/event_table.h"
#include "common/mem.h"


struct thread_row {
    uint32_t thread; /* index */
    uint64_t start, end;  /* ns since the start, UINT64_MAX when unknown */
    uint64_t cpu;
    int has_cpu;
    uint64_t sampled;     /* ns of sampled events (cpu or wall) */
    uint64_t samples;
    uint64_t throws, waits, waited, jit_ns, compiles;
    uint32_t renames;
};

static int by_cpu(const void *a, const void *b)
{
    const struct thread_row *x = a, *y = b;
    if (x->cpu != y->cpu)
        return x->cpu < y->cpu ? 1 : -1;
    if (x->sampled != y->sampled)
        return x->sampled < y->sampled ? 1 : -1;
    return x->thread < y->thread ? -1 : x->thread > y->thread;
}

static void time_text(uint64_t t, char *out, size_t size)
{
    if (t == UINT64_MAX)
        snprintf(out, size, "-");
    else
        snprintf(out, size, "%.3f s", (double)t / 1e9);
}

/* Adds the records of one event (exceptions, lock, jit) to each row. */
static void add_event(const struct profile *p, const struct report_options *o,
                      struct thread_row *rows, enum fmt_ev ev)
{
    struct event_table e;
    if (event_table_open(&e, p, o, ev) < 0 || e.event < 0) {
        event_table_close(&e);
        return;
    }
    for (const struct rec_record *x = event_table_next(&e, NULL); x; x = event_table_next(&e, x)) {
        if (!x->thread || x->thread > p->rec->thread_count)
            continue;
        struct thread_row *r = &rows[x->thread - 1];
        if (ev == FMT_EV_EXCEPTIONS) {
            r->throws++;
        } else if (ev == FMT_EV_LOCK && !event_table_get(&e, x, FMT_LOCK_BELOW_MIN)) {
            r->waits++;
            r->waited += event_table_value(&e, x, FMT_LOCK_WAIT);
        } else if (ev == FMT_EV_JIT) {
            r->compiles++;
            r->jit_ns += event_table_value(&e, x, FMT_JIT_COMPILE);
        }
    }
    event_table_close(&e);
}

int report_threads(const struct profile *p, const struct report_options *o, FILE *out)
{
    const struct recording *r = p->rec;
    struct event_table e;
    if (event_table_open(&e, p, o, FMT_EV_THREAD) < 0) {
        cli_error("out of memory while writing the threads table");
        return -1;
    }
    size_t n = r->thread_count;
    struct thread_row *rows = mem_calloc(n ? n : 1, sizeof *rows);
    if (!rows) {
        event_table_close(&e);
        cli_error("out of memory while writing the threads table");
        return -1;
    }
    for (size_t t = 0; t < n; t++) {
        rows[t].thread = (uint32_t)t;
        rows[t].start = rows[t].end = UINT64_MAX;
    }
    size_t renames = 0;
    for (const struct rec_record *x = event_table_next(&e, NULL); x; x = event_table_next(&e, x)) {
        if (!x->thread || x->thread > n)
            continue;
        struct thread_row *row = &rows[x->thread - 1];
        uint64_t what = event_table_get(&e, x, FMT_THREAD_WHAT);
        if (what == FMT_WHAT_START) {
            row->start = x->time;
        } else if (what == FMT_WHAT_NAME) {
            row->renames++;
            renames++;
        } else if (what == FMT_WHAT_END || what == FMT_WHAT_RUNNING) {
            if (what == FMT_WHAT_END)
                row->end = x->time;
            if (!row->has_cpu || what == FMT_WHAT_END) {
                row->cpu = event_table_value(&e, x, FMT_THREAD_CPU);
                row->has_cpu = 1;
            }
        }
    }
    /* what was sampled on each thread (the sampled events: cpu, wall) */
    const struct prof_filter *f = o ? o->filter : NULL;
    for (size_t i = 0; i < r->sample_count; i++) {
        const struct rec_sample *s = &r->samples[i];
        const struct rec_event *ev = &r->events[s->event];
        if (ev->recorded || s->thread >= n)
            continue;
        if (f && (s->time < f->from_ns || (f->to_ns && s->time >= f->to_ns)))
            continue;
        rows[s->thread].samples++;
        rows[s->thread].sampled += s->weight * ev->period;
    }
    add_event(p, o, rows, FMT_EV_EXCEPTIONS);
    add_event(p, o, rows, FMT_EV_LOCK);
    add_event(p, o, rows, FMT_EV_JIT);

    size_t shown = 0, started = 0, ended = 0;
    for (size_t t = 0; t < n; t++) {
        started += rows[t].start != UINT64_MAX;
        ended += rows[t].end != UINT64_MAX;
    }
    qsort(rows, n, sizeof *rows, by_cpu);
    char span[32];
    event_table_duration_text(event_table_duration(r), span, sizeof span);
    fprintf(out, "# threads: %zu in %s; %zu started and %zu ended while recording\n", n, span,
            started, ended);
    if (e.event < 0)
        fputs("#   (no thread events in this recording: start, end and CPU time unknown)\n", out);
    fprintf(out, "%9s %10s %10s %10s %10s %8s %8s %10s %10s  %s\n", "tid", "start", "end", "cpu",
            "sampled", "samples", "throws", "lock wait", "JIT", "name");
    for (size_t i = 0; i < n; i++) {
        const struct thread_row *row = &rows[i];
        if (f && f->thread && !prof_thread_selected(r, row->thread, f->thread))
            continue;
        if (shown++ >= event_table_limit(&e, n))
            break;
        char start[32], end[32], cpu[32], sampled[32], waited[32], jit[32], name[160];
        time_text(row->start, start, sizeof start);
        time_text(row->end, end, sizeof end);
        if (row->has_cpu)
            event_table_duration_text(row->cpu, cpu, sizeof cpu);
        else
            snprintf(cpu, sizeof cpu, "-");
        if (row->samples)
            event_table_duration_text(row->sampled, sampled, sizeof sampled);
        else
            snprintf(sampled, sizeof sampled, "-");
        event_table_duration_text(row->waited, waited, sizeof waited);
        event_table_duration_text(row->jit_ns, jit, sizeof jit);
        struct rec_str nm = r->strings[r->threads[row->thread].name];
        snprintf(name, sizeof name, "%.*s", (int)nm.len, nm.p);
        fprintf(out, "%9llu %10s %10s %10s %10s %8llu %8llu %10s %10s  %s\n",
                (unsigned long long)r->threads[row->thread].os_tid, start, end, cpu, sampled,
                (unsigned long long)row->samples, (unsigned long long)row->throws,
                row->waits ? waited : "-", row->compiles ? jit : "-", name[0] ? name : "-");
    }
    if (renames) {
        fputs("\nnames, as threads were given them\n", out);
        for (const struct rec_record *x = event_table_next(&e, NULL); x;
             x = event_table_next(&e, x)) {
            if (!x->thread || x->thread > n ||
                event_table_get(&e, x, FMT_THREAD_WHAT) != FMT_WHAT_NAME)
                continue;
            char at[32], name[256];
            time_text(x->time, at, sizeof at);
            fprintf(out, "%10s  tid %llu  %s\n", at,
                    (unsigned long long)r->threads[x->thread - 1].os_tid,
                    event_table_string(&e, event_table_get(&e, x, FMT_THREAD_NAME), name,
                                       sizeof name));
        }
    }
    mem_free(rows);
    event_table_close(&e);
    return 0;
}
