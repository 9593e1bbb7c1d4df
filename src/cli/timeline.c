/*
 * timeline: see timeline.h.  One counting pass per thread, then a stable
 * sort by time inside each group (samples of one thread are almost always
 * in order already).
 */
#include "cli/timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"

static int by_thread_time(const void *a, const void *b, void *ctx)
{
    const struct recording *sort_rec = ctx;
    const struct prof_sample *x = a, *y = b;
    const struct rec_sample *sx = &sort_rec->samples[x->sample], *sy = &sort_rec->samples[y->sample];
    if (sx->thread != sy->thread)
        return sx->thread < sy->thread ? -1 : 1;
    if (sx->time != sy->time)
        return sx->time < sy->time ? -1 : 1;
    return x->sample < y->sample ? -1 : x->sample > y->sample; /* stable */
}

int timeline_build(const struct profile *p, struct timeline *t)
{
    memset(t, 0, sizeof *t);
    size_t n = p->selected_samples;
    t->order = mem_alloc((n ? n : 1) * sizeof *t->order);
    t->threads = mem_alloc((p->rec->thread_count ? p->rec->thread_count : 1) * sizeof *t->threads);
    if (!t->order || !t->threads) {
        timeline_free(t);
        return -1;
    }
    if (n)
        memcpy(t->order, p->selected, n * sizeof *t->order);
    qsort_r(t->order, n, sizeof *t->order, by_thread_time, (void *)p->rec);
    for (size_t i = 0; i < n; i++) {
        uint32_t th = p->rec->samples[t->order[i].sample].thread;
        if (!t->thread_count || t->threads[t->thread_count - 1].thread != th) {
            t->threads[t->thread_count].thread = th;
            t->threads[t->thread_count].first = i;
            t->threads[t->thread_count].count = 0;
            t->thread_count++;
        }
        t->threads[t->thread_count - 1].count++;
    }
    return 0;
}

void timeline_free(struct timeline *t)
{
    mem_free(t->order);
    mem_free(t->threads);
    memset(t, 0, sizeof *t);
}

void timeline_thread_name(const struct profile *p, uint32_t thread, char *out, size_t size)
{
    const struct rec_thread *th = &p->rec->threads[thread];
    struct rec_str name = p->rec->strings[th->name];
    if (name.len)
        snprintf(out, size, "%.*s (tid %llu)", (int)name.len, name.p,
                 (unsigned long long)th->os_tid);
    else
        snprintf(out, size, "thread %llu", (unsigned long long)th->os_tid);
}
