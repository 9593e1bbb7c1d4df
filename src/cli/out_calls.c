/*
 * out_calls: the table of a traced recording (`record --trace`): for every
 * method, its calls, inclusive time, self time, mean and longest call,
 * summed over every call path and thread that pass the filters.
 *
 * It reads the `calls` event whatever --event says: each record is one call
 * path's calls and times since the previous record of that path (values:
 * self ns and calls; fields: inclusive ns and the longest call so far), and
 * its stack is the path, leaf first.  A method's inclusive time counts its
 * outermost calls only: a path on which the method already appears above
 * its leaf is a recursive call, whose time its outer call already holds.
 * The mean is the inclusive time over those outermost calls.  A recording
 * traced with --trace=counts has calls only.
 *
 * With --paths the rows are the call paths themselves (summed over threads,
 * or per thread with --threads), root first as in collapsed stacks: each
 * path's calls, its inclusive and self time, mean and longest call, the
 * exact counts the tree and the flame graph draw.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/report.h"
#include "common/map.h"
#include "common/mem.h"

struct row {
    uint32_t name; /* a method's name id, or (--paths) a path's index */
    uint64_t calls, outer_calls;
    uint64_t incl, self, max;
};

static const char *sort_key = "self";

/* The call paths of the selected records as a tree (node 0: the root),
 * so that each path's times can lose the cost of the traced calls below
 * it. */
struct path_node {
    uint32_t parent, name;
    int nested; /* its method is already above it: a recursive call */
    uint64_t calls, incl, self, max;
    uint64_t direct; /* calls of its children */
    uint64_t below;  /* calls of every path below it */
};

struct path_tree {
    struct path_node *nodes;
    size_t count, cap;
    struct map64 child; /* (parent << 32 | frame) -> node */
};

static void tree_init(struct path_tree *t)
{
    memset(t, 0, sizeof *t);
    map64_init(&t->child);
}

static void tree_free(struct path_tree *t)
{
    mem_free(t->nodes);
    map64_free(&t->child);
}

/* The node of a path given leaf first; UINT32_MAX when out of memory. */
static uint32_t tree_path(struct path_tree *t, const uint32_t *frames, uint32_t depth)
{
    if (!t->count) {
        t->nodes = mem_grow(t->nodes, &t->cap, 1, sizeof *t->nodes);
        if (!t->nodes)
            return UINT32_MAX;
        memset(&t->nodes[0], 0, sizeof t->nodes[0]);
        t->count = 1;
    }
    uint32_t at = 0;
    for (uint32_t k = depth; k-- > 0;) {
        uint64_t key = (uint64_t)at << 32 | frames[k];
        uint32_t next;
        if (map64_get(&t->child, key, &next)) {
            at = next;
            continue;
        }
        if (t->count >= UINT32_MAX - 1)
            return UINT32_MAX;
        struct path_node *grown = mem_grow(t->nodes, &t->cap, t->count + 1, sizeof *grown);
        if (!grown)
            return UINT32_MAX;
        t->nodes = grown;
        next = (uint32_t)t->count++;
        memset(&t->nodes[next], 0, sizeof t->nodes[next]);
        t->nodes[next].parent = at;
        if (map64_put(&t->child, key, next) < 0)
            return UINT32_MAX;
        at = next;
    }
    return at;
}

/* The hooks' own cost the agent measured (FMT_INFO_TRACE_COST), ns. */
struct cost {
    int known;
    double call, own; /* as measured at start, times the stretch */
    double stretch;   /* the busy machine's stretch of the traced threads' time */
};

static double cost_key(const struct rec_str *v, const char *key)
{
    char text[256];
    snprintf(text, sizeof text, "%.*s", (int)v->len, v->p);
    size_t n = strlen(key);
    for (char *at = text; (at = strstr(at, key)) != NULL; at += n)
        if ((at == text || at[-1] == ' ') && at[n] == '=')
            return strtod(at + n + 1, NULL);
    return -1;
}

static void cost_of(const struct recording *r, struct cost *c)
{
    const struct rec_str *v = rec_info(r, FMT_INFO_TRACE_COST);
    if (!v || !v->len)
        return;
    c->call = cost_key(v, "call_ns");
    c->own = cost_key(v, "own_ns");
    c->stretch = cost_key(v, "stretch");
    if (c->stretch < 1 || c->stretch > 100)
        c->stretch = 1; /* absent (an older agent) or not believable */
    c->call *= c->stretch;
    c->own *= c->stretch;
    /* a cost that makes no sense is not used */
    c->known = c->call >= 0 && c->own >= 0 && c->own <= c->call && c->call < 1e6;
    if (!c->known)
        c->call = c->own = 0;
}

static uint64_t mean_of(const struct row *r)
{
    return r->outer_calls ? r->incl / r->outer_calls : 0;
}

static uint64_t key_of(const struct row *r)
{
    if (!strcmp(sort_key, "calls"))
        return r->calls;
    if (!strcmp(sort_key, "inclusive"))
        return r->incl;
    if (!strcmp(sort_key, "mean"))
        return mean_of(r);
    if (!strcmp(sort_key, "max"))
        return r->max;
    return r->self;
}

static int by_key(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    uint64_t kx = key_of(x), ky = key_of(y);
    if (kx != ky)
        return kx < ky ? 1 : -1;
    if (x->calls != y->calls)
        return x->calls < y->calls ? 1 : -1;
    return x->name < y->name ? -1 : x->name > y->name;
}

int report_calls_sort(const char *key)
{
    static const char *const keys[] = {"calls", "inclusive", "self", "mean", "max"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (!strcmp(key, keys[i])) {
            sort_key = keys[i];
            return 0;
        }
    }
    return -1;
}

/* "12.3 ns", "4.56 us", "7.89 ms", "1.234 s" */
static void duration(uint64_t ns, char *out, size_t size)
{
    double v = (double)ns;
    if (v < 1e3)
        snprintf(out, size, "%.0f ns", v);
    else if (v < 1e6)
        snprintf(out, size, "%.2f us", v / 1e3);
    else if (v < 1e9)
        snprintf(out, size, "%.2f ms", v / 1e6);
    else
        snprintf(out, size, "%.3f s", v / 1e9);
}

static const struct profile *calls_view(const struct profile *p)
{
    long calls = rec_event_of(p->rec, FMT_EV_CALLS);
    for (size_t i = 0; i < p->view_count && calls >= 0; i++)
        if (p->views[i].event == calls)
            return &p->views[i];
    return NULL;
}

static void info_line(const struct recording *r, const char *key, const char *prefix, FILE *out)
{
    const struct rec_str *v = rec_info(r, key);
    if (v && v->len)
        fprintf(out, "# %s%.*s\n", prefix, (int)v->len, v->p);
}

/* The k-th sample of the event is its k-th record with a stack: the
 * record of each sample (mem_calloc'd, caller frees), or NULL. */
static uint32_t *records_of_samples(const struct recording *r, long event)
{
    uint32_t *record_of = mem_calloc(r->sample_count ? r->sample_count : 1, sizeof *record_of);
    if (!record_of)
        return NULL;
    size_t next_record = 0;
    for (size_t i = 0; i < r->sample_count; i++) {
        if ((long)r->samples[i].event != event)
            continue;
        while (next_record < r->record_count &&
               ((long)r->records[next_record].event != event || !r->records[next_record].stack))
            next_record++;
        record_of[i] = (uint32_t)next_record++;
    }
    return record_of;
}

static void row_line(FILE *out, const struct row *row, int timed)
{
    if (timed) {
        char incl[32], self[32], mean[32], max[32];
        duration(row->incl, incl, sizeof incl);
        duration(row->self, self, sizeof self);
        duration(mean_of(row), mean, sizeof mean);
        duration(row->max, max, sizeof max);
        fprintf(out, "%12llu %12s %12s %12s %12s  ", (unsigned long long)row->calls, incl, self,
                mean, max);
    } else {
        fprintf(out, "%12llu  ", (unsigned long long)row->calls);
    }
}

static void heading(FILE *out, int timed, const char *what)
{
    if (timed)
        fprintf(out, "%12s %12s %12s %12s %12s  %s\n", "calls", "inclusive", "self", "mean", "max",
                what);
    else
        fprintf(out, "%12s  %s\n", "calls", what);
}

/* A path's names, root first, joined by ';' (the thread first with
 * --threads). */
static void path_text(const struct profile *v, uint32_t path, int by_thread, FILE *out)
{
    const struct prof_path *pp = &v->paths[path];
    const struct recording *r = v->rec;
    struct rec_stack st = r->stacks[pp->stack];
    int first = 1;
    if (by_thread) {
        fputs(prof_name(v, v->thread_name[pp->thread]), out);
        first = 0;
    }
    for (uint32_t k = st.depth; k-- > 0;) {
        if (!first)
            fputc(';', out);
        fputs(prof_name(v, v->frame_name[r->stack_frames[st.offset + k]]), out);
        first = 0;
    }
    fputc('\n', out);
}

/* --paths: one row per path of the view. */
static int paths_table(const struct profile *v, const struct report_options *o, int timed,
                       const uint32_t *record_of, FILE *out)
{
    const struct recording *r = v->rec;
    struct row *rows = mem_calloc(v->path_count ? v->path_count : 1, sizeof *rows);
    if (!rows)
        return -1;
    for (size_t i = 0; i < v->path_count; i++)
        rows[i].name = (uint32_t)i;
    for (size_t i = 0; i < v->selected_samples; i++) {
        uint32_t si = v->selected[i].sample;
        if (record_of[si] >= r->record_count)
            continue;
        const struct rec_record *x = &r->records[record_of[si]];
        struct row *row = &rows[v->selected[i].path];
        uint64_t calls = rec_value(r, x, FMT_EV_CALLS, FMT_CALLS_CALLS);
        row->calls += calls;
        if (!timed)
            continue;
        /* every call of a path is outermost on it: a recursive call has a
         * path of its own */
        row->outer_calls += calls;
        row->self += rec_value(r, x, FMT_EV_CALLS, FMT_CALLS_SELF);
        row->incl += rec_field(r, x, FMT_EV_CALLS, FMT_CALLS_INCLUSIVE);
        uint64_t max = rec_field(r, x, FMT_EV_CALLS, FMT_CALLS_MAX);
        if (max > row->max)
            row->max = max;
    }
    qsort(rows, v->path_count, sizeof *rows, by_key);
    size_t paths = 0;
    for (size_t i = 0; i < v->path_count; i++)
        paths += rows[i].calls != 0;
    fprintf(out, "# %zu call paths, by %s; each path root first, its method last\n", paths,
            sort_key);
    heading(out, timed, "path");
    long shown = 0;
    for (size_t i = 0; i < v->path_count; i++) {
        if (!rows[i].calls)
            continue;
        if (o->limit && shown >= o->limit)
            break;
        row_line(out, &rows[i], timed);
        path_text(v, rows[i].name, o->filter && o->filter->thread_roots, out);
        shown++;
    }
    mem_free(rows);
    return 0;
}

int report_calls(const struct profile *p, const struct report_options *o, FILE *out)
{
    const struct recording *r = p->rec;
    const struct profile *v = calls_view(p);
    if (!v) {
        cli_error("the recording has no calls: record with --trace to count calls");
        return -1;
    }
    /* --trace=counts: the calls alone */
    int timed = rec_value_of(r, FMT_EV_CALLS, FMT_CALLS_SELF) >= 0;

    uint32_t *record_of = records_of_samples(r, v->event);
    struct row *rows = mem_calloc(p->names->count ? p->names->count : 1, sizeof *rows);
    if (!record_of || !rows) {
        mem_free(record_of);
        mem_free(rows);
        cli_error("out of memory while writing the calls table");
        return -1;
    }
    size_t names = p->names->count;
    for (size_t i = 0; i < names; i++)
        rows[i].name = (uint32_t)i;
    uint64_t all_calls = 0;
    uint8_t *threads = mem_calloc(r->thread_count ? r->thread_count : 1, 1);
    size_t thread_count = 0;
    struct path_tree tree;
    tree_init(&tree);
    int ok = 1;
    for (size_t i = 0; i < v->selected_samples && ok; i++) {
        uint32_t si = v->selected[i].sample;
        const struct rec_sample *sm = &r->samples[si];
        if (record_of[si] >= r->record_count)
            continue;
        const struct rec_record *x = &r->records[record_of[si]];
        struct rec_stack st = r->stacks[sm->stack];
        if (!st.depth)
            continue;
        uint32_t leaf = p->frame_name[r->stack_frames[st.offset]];
        int nested = 0;
        for (uint32_t k = 1; k < st.depth && !nested; k++)
            nested = p->frame_name[r->stack_frames[st.offset + k]] == leaf;
        uint32_t at = tree_path(&tree, r->stack_frames + st.offset, st.depth);
        if (at == UINT32_MAX) {
            ok = 0;
            break;
        }
        struct path_node *n = &tree.nodes[at];
        n->name = leaf;
        n->nested = nested;
        uint64_t calls = rec_value(r, x, FMT_EV_CALLS, FMT_CALLS_CALLS);
        n->calls += calls;
        all_calls += calls;
        if (threads && !threads[sm->thread]) {
            threads[sm->thread] = 1;
            thread_count++;
        }
        if (!timed)
            continue;
        n->self += rec_value(r, x, FMT_EV_CALLS, FMT_CALLS_SELF);
        n->incl += rec_field(r, x, FMT_EV_CALLS, FMT_CALLS_INCLUSIVE);
        uint64_t max = rec_field(r, x, FMT_EV_CALLS, FMT_CALLS_MAX);
        if (max > n->max)
            n->max = max;
    }
    if (!ok) {
        tree_free(&tree);
        mem_free(threads);
        mem_free(record_of);
        mem_free(rows);
        cli_error("out of memory while writing the calls table");
        return -1;
    }
    struct cost cost = {0};
    if (timed)
        cost_of(r, &cost);
    /* the calls below each path: a child is made after its parent */
    for (size_t k = tree.count; k-- > 1;) {
        struct path_node *n = &tree.nodes[k], *up = &tree.nodes[n->parent];
        up->below += n->below + n->calls;
        up->direct += n->calls;
    }
    double raw_self = 0, taken = 0;
    for (size_t k = 1; k < tree.count; k++) {
        const struct path_node *n = &tree.nodes[k];
        if (!n->calls && !n->self && !n->incl)
            continue;
        struct row *row = &rows[n->name];
        row->calls += n->calls;
        if (!timed)
            continue;
        /* the hooks' own cost (trace_cost): each call's own, in itself;
         * each traced call made, in its caller's self time, and each one
         * below, in the inclusive time */
        double self = (double)n->self - (double)n->calls * cost.own -
                      (double)n->direct * (cost.call - cost.own);
        double incl = (double)n->incl - (double)n->calls * cost.own -
                      (double)n->below * cost.call;
        incl = incl > 0 ? incl : 0;
        /* an estimate of the cost above what was measured must not leave
         * more self time than inclusive time */
        self = self < 0 ? 0 : self > incl ? incl : self;
        raw_self += (double)n->self;
        taken += (double)n->self - self;
        row->self += (uint64_t)(self + 0.5);
        if (!n->nested) {
            row->outer_calls += n->calls;
            row->incl += (uint64_t)(incl + 0.5);
        }
        /* the longest call: as if it made its path's mean number of calls */
        double max = (double)n->max - cost.own -
                     (n->calls ? (double)n->below / (double)n->calls * cost.call : 0);
        max = max > 0 ? max : 0;
        if ((uint64_t)(max + 0.5) > row->max)
            row->max = (uint64_t)(max + 0.5);
    }
    tree_free(&tree);
    mem_free(threads);
    size_t methods = 0;
    for (size_t i = 0; i < names; i++)
        if (rows[i].calls)
            methods++;
    qsort(rows, names, sizeof *rows, by_key);

    const struct rec_str *how = rec_info(r, FMT_INFO_TRACE);
    if (how && memmem(how->p, how->len, "--trace=flat", 12))
        fprintf(out, "# calls: %llu calls of %zu methods, all threads together (record "
                "--trace=flat)\n", (unsigned long long)all_calls, methods);
    else
        fprintf(out, "# calls: %llu calls of %zu methods on %zu thread%s (record --trace)\n",
                (unsigned long long)all_calls, methods, thread_count, thread_count == 1 ? "" : "s");
    info_line(r, FMT_INFO_TRACE, "traced: ", out);
    info_line(r, FMT_INFO_TRACE_SCOPE, "the program's own assemblies: ", out);
    info_line(r, FMT_INFO_TRACE_METHODS, "", out);
    if (timed && cost.known) {
        char per_call[32], own[32], all[32], of[32], stretch[96] = "";
        snprintf(per_call, sizeof per_call, "%.1f ns", cost.call);
        snprintf(own, sizeof own, "%.1f ns", cost.own);
        duration((uint64_t)(taken + 0.5), all, sizeof all);
        duration((uint64_t)(raw_self + 0.5), of, sizeof of);
        if (cost.stretch > 1.005)
            snprintf(stretch, sizeof stretch, " (times %.2f: the traced threads waited that much "
                     "for a processor)", cost.stretch);
        fprintf(out, "# times: the tracer's own cost taken out, as measured at start%s: %s per "
                "traced call from its caller's time, %s from the called method's own; %s of "
                "the %s of self time measured\n", stretch, per_call, own, all, of);
    } else if (timed) {
        fprintf(out, "# times: as measured, the tracer's own cost included (the recording does "
                "not say what it was)\n");
    }
    char losses[512];
    report_losses(v, losses, sizeof losses);
    if (losses[0])
        fprintf(out, "# lost: %s\n", losses);
    uint64_t open = rec_counter(r, FMT_COUNTER_OPEN_AT_END);
    if (open)
        fprintf(out, "# %llu calls were still running when their thread or the recording ended; "
                "their times run to that moment\n", (unsigned long long)open);
    if (r->status != REC_COMPLETE)
        fprintf(out, "# recording %s: %s\n", rec_status_name(r->status), r->problem);
    if (o->paths) {
        mem_free(rows);
        int rc = paths_table(v, o, timed, record_of, out);
        mem_free(record_of);
        if (rc < 0)
            cli_error("out of memory while writing the calls table");
        return rc;
    }
    mem_free(record_of);
    heading(out, timed, "method");
    long shown = 0;
    for (size_t i = 0; i < names; i++) {
        const struct row *row = &rows[i];
        if (!row->calls)
            continue;
        if (o->limit && shown >= o->limit)
            break;
        row_line(out, row, timed);
        fprintf(out, "%s\n", prof_name(p, row->name));
        shown++;
    }
    mem_free(rows);
    return 0;
}
