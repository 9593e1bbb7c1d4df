/*
 * event_table: see event_table.h.
 */
#include "cli/event_table.h"

#include <stdlib.h>
#include <string.h>

#include "cli/timeline.h"
#include "common/mem.h"

int event_table_open(struct event_table *e, const struct profile *p,
                     const struct report_options *o, enum fmt_ev ev)
{
    memset(e, 0, sizeof *e);
    e->p = p;
    e->r = p->rec;
    e->o = o;
    e->ev = ev;
    e->event = rec_event_of(p->rec, ev);
    e->memo = mem_calloc(p->names->count ? 2 * p->names->count : 2, 1);
    return e->memo ? 0 : -1;
}

void event_table_close(struct event_table *e)
{
    mem_free(e->memo);
    memset(e, 0, sizeof *e);
}

uint64_t event_table_get(const struct event_table *e, const struct rec_record *x, unsigned field)
{
    return rec_field(e->r, x, e->ev, field);
}

uint64_t event_table_value(const struct event_table *e, const struct rec_record *x, unsigned value)
{
    return rec_value(e->r, x, e->ev, value);
}

static int stack_matches(struct event_table *e, uint32_t stack, const regex_t *re, uint8_t *memo)
{
    const struct recording *r = e->r;
    struct rec_stack s = r->stacks[stack];
    for (uint32_t k = 0; k < s.depth; k++) {
        uint32_t name = e->p->frame_name[r->stack_frames[s.offset + k]];
        if (!memo[name])
            memo[name] = regexec(re, prof_name(e->p, name), 0, NULL, 0) == 0 ? 2 : 1;
        if (memo[name] == 2)
            return 1;
    }
    return 0;
}

int event_table_keep(struct event_table *e, const struct rec_record *x)
{
    const struct prof_filter *f = e->o ? e->o->filter : NULL;
    if (!f)
        return 1;
    if (x->time < f->from_ns || (f->to_ns && x->time >= f->to_ns))
        return 0;
    if (f->thread && (!x->thread || !prof_thread_selected(e->r, x->thread - 1, f->thread)))
        return 0;
    if ((f->has_include || f->has_exclude) && x->stack) {
        size_t names = e->p->names->count;
        if (f->has_include && !stack_matches(e, x->stack, &f->include, e->memo))
            return 0;
        if (f->has_exclude && stack_matches(e, x->stack, &f->exclude, e->memo + names))
            return 0;
    }
    return 1;
}

const struct rec_record *event_table_next(struct event_table *e,
                                          const struct rec_record *after)
{
    if (e->event < 0 || !e->r->record_count)
        return NULL; /* (no records: `records` may be NULL, and NULL + 0 is undefined) */
    const struct rec_record *x = after ? after + 1 : e->r->records;
    const struct rec_record *end = e->r->records + e->r->record_count;
    for (; x < end; x++)
        if ((long)x->event == e->event && event_table_keep(e, x))
            return x;
    return NULL;
}

const char *event_table_frame_name(const struct event_table *e, uint64_t frame)
{
    if (!frame || frame >= e->r->frame_count)
        return "-";
    return prof_name(e->p, e->p->frame_name[frame]);
}

const char *event_table_string(const struct event_table *e, uint64_t id, char *buf, size_t size)
{
    if (!id || id >= e->r->string_count) {
        snprintf(buf, size, "-");
        return buf;
    }
    struct rec_str s = e->r->strings[id];
    snprintf(buf, size, "%.*s", (int)s.len, s.p);
    return buf;
}

void event_table_thread_name(const struct event_table *e, uint32_t thread_plus_one, char *out,
                             size_t size)
{
    if (!thread_plus_one || thread_plus_one > e->r->thread_count) {
        snprintf(out, size, "-");
        return;
    }
    timeline_thread_name(e->p, thread_plus_one - 1, out, size);
}

void event_table_thread_id_name(const struct event_table *e, uint64_t id, char *out, size_t size)
{
    for (size_t t = 0; id && t < e->r->thread_count; t++) {
        if (e->r->threads[t].id == id) {
            event_table_thread_name(e, (uint32_t)t + 1, out, size);
            return;
        }
    }
    snprintf(out, size, "-");
}

static int is_code(uint8_t kind)
{
    return kind == FMT_FRAME_MANAGED || kind == FMT_FRAME_NATIVE || kind == FMT_FRAME_RUNTIME;
}

uint32_t event_table_site(const struct event_table *e, uint32_t stack)
{
    if (!stack || stack >= e->r->stack_count)
        return 0;
    struct rec_stack s = e->r->stacks[stack];
    for (uint32_t k = 0; k < s.depth; k++) {
        uint32_t f = e->r->stack_frames[s.offset + k];
        if (is_code(e->r->frames[f].kind))
            return f;
    }
    return 0;
}

void event_table_stack_text(const struct event_table *e, uint32_t stack, int frames, char *out,
                            size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    if (!stack || stack >= e->r->stack_count) {
        snprintf(out, size, "-");
        return;
    }
    struct rec_stack s = e->r->stacks[stack];
    int shown = 0;
    for (uint32_t k = 0; k < s.depth && shown < frames && used < size; k++) {
        uint32_t f = e->r->stack_frames[s.offset + k];
        if (!is_code(e->r->frames[f].kind))
            continue;
        int n = snprintf(out + used, size - used, "%s%s", shown ? " < " : "",
                         event_table_frame_name(e, f));
        if (n > 0)
            used += (size_t)n;
        shown++;
    }
}

uint64_t event_table_duration(const struct recording *r)
{
    uint64_t last = 0;
    for (size_t i = 0; i < r->sample_count; i++)
        if (r->samples[i].time > last)
            last = r->samples[i].time;
    for (size_t i = 0; i < r->record_count; i++)
        if (r->records[i].time > last)
            last = r->records[i].time;
    return last;
}

void event_table_duration_text(uint64_t ns, char *out, size_t size)
{
    if (ns >= 1000000000ull)
        snprintf(out, size, "%.2f s", (double)ns / 1e9);
    else if (ns >= 1000000ull)
        snprintf(out, size, "%.1f ms", (double)ns / 1e6);
    else if (ns >= 1000ull)
        snprintf(out, size, "%.1f us", (double)ns / 1e3);
    else
        snprintf(out, size, "%llu ns", (unsigned long long)ns);
}

void event_table_rows_init(struct event_table_rows *t)
{
    memset(t, 0, sizeof *t);
    map64_init(&t->index);
}

void event_table_rows_free(struct event_table_rows *t)
{
    map64_free(&t->index);
    mem_free(t->rows);
    memset(t, 0, sizeof *t);
}

struct event_table_row *event_table_row(struct event_table_rows *t, uint64_t key)
{
    uint32_t at;
    if (map64_get(&t->index, key, &at))
        return &t->rows[at];
    struct event_table_row *grown = mem_grow(t->rows, &t->cap, t->count + 1, sizeof *grown);
    if (!grown || map64_put(&t->index, key, (uint32_t)t->count) < 0) {
        if (grown)
            t->rows = grown;
        t->failed = 1;
        return NULL;
    }
    t->rows = grown;
    struct event_table_row *row = &t->rows[t->count++];
    memset(row, 0, sizeof *row);
    row->key = key;
    return row;
}

static int by_count(const void *a, const void *b)
{
    const struct event_table_row *x = a, *y = b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    if (x->sum != y->sum)
        return x->sum < y->sum ? 1 : -1;
    return x->key < y->key ? -1 : x->key > y->key;
}

static int by_sum(const void *a, const void *b)
{
    const struct event_table_row *x = a, *y = b;
    if (x->sum != y->sum)
        return x->sum < y->sum ? 1 : -1;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return x->key < y->key ? -1 : x->key > y->key;
}

void event_table_rows_sort(struct event_table_rows *t, int sum)
{
    if (t->count)
        qsort(t->rows, t->count, sizeof *t->rows, sum ? by_sum : by_count);
    map64_clear(&t->index); /* positions changed: no more event_table_row */
}

size_t event_table_limit(const struct event_table *e, size_t rows)
{
    long limit = e->o ? e->o->limit : 0;
    return limit > 0 && (size_t)limit < rows ? (size_t)limit : rows;
}
