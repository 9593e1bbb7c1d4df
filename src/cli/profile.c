/*
 * profile: see profile.h.  Work is done per distinct stack, not per sample:
 * samples are first summed into (thread, stack) paths, and only the paths
 * are matched against regexes and inserted into the call tree, so a
 * million samples over a few thousand stacks cost a few thousand inserts.
 */
#include "cli/merge.h"
#include "cli/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/fold.h"
#include "cli/frame_name.h"
#include "cli/live.h"
#include "common/mem.h"

#define GROW(arr, cap, n) mem_grow_array((void **)&(arr), &(cap), (n), sizeof *(arr))

const char *prof_name(const struct profile *p, uint32_t name_id)
{
    return name_id < p->names->count ? p->names->strs[name_id] : "";
}

double prof_value(const struct profile *p, uint64_t weight)
{
    if (p->event < 0)
        return (double)weight;
    return (double)weight * (double)p->rec->events[p->event].period;
}

static const char *text_of(struct rec_str s, char *buf, size_t size)
{
    snprintf(buf, size, "%.*s", (int)s.len, s.p);
    return buf;
}

const char *prof_unit(const struct profile *p)
{
    static char unit[64];
    if (p->event < 0)
        return "";
    return text_of(p->rec->events[p->event].unit, unit, sizeof unit);
}

const char *prof_event_name(const struct profile *p)
{
    static char name[64];
    if (p->event < 0)
        return "none";
    return text_of(p->rec->events[p->event].name, name, sizeof name);
}

const char *prof_count_name(const struct profile *p)
{
    static char name[64];
    if (p->event < 0 || p->rec->events[p->event].value_count < 2)
        return "samples";
    return text_of(p->rec->events[p->event].value_names[1], name, sizeof name);
}

const char *prof_count_unit(const struct profile *p)
{
    static char unit[64];
    if (p->event < 0 || p->rec->events[p->event].value_count < 2)
        return "count";
    return text_of(p->rec->events[p->event].value_units[1], unit, sizeof unit);
}

/* Interns a display name; returns its id or UINT32_MAX.  A name keeps
 * the kind of the first frame that printed it. */
static uint32_t intern_name(struct prof_shared *sh, const char *s, size_t len, uint8_t kind)
{
    int is_new;
    uint32_t id = strtab_intern(&sh->names, s, len, &is_new);
    if (id == UINT32_MAX || !is_new)
        return id;
    uint8_t *k = mem_realloc(sh->name_kind, sh->names.count);
    if (!k)
        return UINT32_MAX;
    sh->name_kind = k;
    sh->name_kind[id] = kind;
    return id;
}

static int build_names(struct prof_shared *sh)
{
    struct recording *r = &sh->rec;
    sh->name_kind = mem_calloc(1, 1);
    sh->frame_name = mem_calloc(r->frame_count, sizeof *sh->frame_name);
    sh->thread_name = mem_calloc(r->thread_count ? r->thread_count : 1, sizeof *sh->thread_name);
    if (!sh->name_kind || !sh->frame_name || !sh->thread_name)
        return -1;
    /* only frames some sample's or record's stack holds: folding (fold.h)
     * leaves the frames it replaced in the table */
    uint8_t *used = mem_calloc(r->frame_count ? r->frame_count : 1, 1);
    uint8_t *stack_seen = mem_calloc(r->stack_count ? r->stack_count : 1, 1);
    if (!used || !stack_seen) {
        mem_free(used);
        mem_free(stack_seen);
        return -1;
    }
    for (size_t i = 0; i < r->sample_count + r->record_count; i++) {
        uint32_t st = i < r->sample_count ? r->samples[i].stack
                                          : r->records[i - r->sample_count].stack;
        if (st >= r->stack_count || stack_seen[st])
            continue;
        stack_seen[st] = 1;
        for (uint32_t k = 0; k < r->stacks[st].depth; k++)
            used[r->stack_frames[r->stacks[st].offset + k]] = 1;
    }
    mem_free(stack_seen);
    /* and the frames recorded events name in their fields (the method a
     * compile was of, the method that caught an exception) */
    for (size_t i = 0; i < r->record_count; i++) {
        const struct rec_record *x = &r->records[i];
        const struct rec_event *e = &r->events[x->event];
        const uint64_t *fields = rec_fields(r, x);
        for (uint32_t k = 0; k < e->field_count; k++)
            if (e->field_types[k] == FMT_FIELD_FRAME && fields[k] < r->frame_count)
                used[fields[k]] = 1;
    }
    char buf[1024];
    for (uint32_t id = 1; id < r->frame_count; id++) {
        if (!used[id])
            continue;
        size_t len = frame_name_format(r, id, buf, sizeof buf);
        if (len >= sizeof buf)
            len = sizeof buf - 1;
        uint32_t name = intern_name(sh, buf, len, r->frames[id].kind);
        if (name == UINT32_MAX) {
            mem_free(used);
            return -1;
        }
        sh->frame_name[id] = name;
    }
    mem_free(used);
    for (size_t t = 0; t < r->thread_count; t++) {
        struct rec_str n = r->strings[r->threads[t].name];
        int len;
        if (n.len)
            len = snprintf(buf, sizeof buf, "[%.*s tid=%llu]", (int)n.len, n.p,
                           (unsigned long long)r->threads[t].os_tid);
        else
            len = snprintf(buf, sizeof buf, "[tid=%llu]", (unsigned long long)r->threads[t].os_tid);
        if (len < 0 || (size_t)len >= sizeof buf)
            len = (int)sizeof buf - 1;
        uint32_t name = intern_name(sh, buf, (size_t)len, 0);
        if (name == UINT32_MAX)
            return -1;
        sh->thread_name[t] = name;
    }
    return 0;
}

int prof_thread_selected(const struct recording *r, size_t t, const char *want)
{
    if (!want)
        return 1;
    char tid[32];
    snprintf(tid, sizeof tid, "%llu", (unsigned long long)r->threads[t].os_tid);
    if (strcmp(tid, want) == 0)
        return 1;
    struct rec_str n = r->strings[r->threads[t].name];
    size_t wl = strlen(want);
    for (size_t i = 0; wl && i + wl <= n.len; i++)
        if (memcmp(n.p + i, want, wl) == 0)
            return 1;
    return 0;
}

/* Does any frame of the stack have a name matching `re`?  Results per name
 * are cached in memo (0 unknown, 1 no, 2 yes). */
static int stack_matches(const struct profile *p, uint32_t stack, const regex_t *re,
                         uint8_t *memo)
{
    const struct recording *r = p->rec;
    struct rec_stack s = r->stacks[stack];
    for (uint32_t i = 0; i < s.depth; i++) {
        uint32_t name = p->frame_name[r->stack_frames[s.offset + i]];
        if (!memo[name])
            memo[name] = regexec(re, prof_name(p, name), 0, NULL, 0) == 0 ? 2 : 1;
        if (memo[name] == 2)
            return 1;
    }
    return 0;
}

/* Which samples the filters keep, over every event at once: thread, time
 * window and stack (0 drop, 1 keep), one pass over the recording. */
static uint8_t *filter_samples(const struct prof_shared *sh, const struct profile *any,
                               const struct prof_filter *f)
{
    const struct recording *r = &sh->rec;
    uint8_t *keep = mem_alloc(r->sample_count ? r->sample_count : 1);
    uint8_t *keep_thread = mem_calloc(r->thread_count ? r->thread_count : 1, 1);
    uint8_t *stack_ok = mem_calloc(r->stack_count, 1); /* 0 unknown, 1 drop, 2 keep */
    uint8_t *memo_in = mem_calloc(sh->names.count, 1);
    uint8_t *memo_ex = mem_calloc(sh->names.count, 1);
    if (!keep || !keep_thread || !stack_ok || !memo_in || !memo_ex) {
        mem_free(keep);
        keep = NULL;
        goto out;
    }
    for (size_t t = 0; t < r->thread_count; t++)
        keep_thread[t] = (uint8_t)prof_thread_selected(r, t, f->thread);
    for (size_t i = 0; i < r->sample_count; i++) {
        const struct rec_sample *s = &r->samples[i];
        keep[i] = 0;
        if (!keep_thread[s->thread])
            continue;
        if (s->time < f->from_ns || (f->to_ns && s->time >= f->to_ns))
            continue;
        if (!stack_ok[s->stack]) {
            int ok = 1;
            if (f->has_include && !stack_matches(any, s->stack, &f->include, memo_in))
                ok = 0;
            if (ok && f->has_exclude && stack_matches(any, s->stack, &f->exclude, memo_ex))
                ok = 0;
            stack_ok[s->stack] = ok ? 2 : 1;
        }
        keep[i] = stack_ok[s->stack] == 2;
    }
out:
    mem_free(keep_thread);
    mem_free(stack_ok);
    mem_free(memo_in);
    mem_free(memo_ex);
    return keep;
}

static int select_samples(struct profile *p, const struct prof_filter *f, const uint8_t *keep)
{
    const struct recording *r = p->rec;
    int rc = -1;
    struct map64 path_of;
    map64_init(&path_of);
    for (size_t i = 0; i < r->sample_count; i++) {
        const struct rec_sample *s = &r->samples[i];
        if ((long)s->event != p->event || !keep[i])
            continue;
        uint64_t key = ((uint64_t)(f->thread_roots ? s->thread : 0) << 32) | s->stack;
        uint32_t at;
        if (!map64_get(&path_of, key, &at)) {
            if (GROW(p->paths, p->path_cap, p->path_count + 1))
                goto out;
            at = (uint32_t)p->path_count++;
            struct prof_path np = {f->thread_roots ? s->thread : 0, s->stack, 0, 0, 0};
            p->paths[at] = np;
            if (map64_put(&path_of, key, at) < 0)
                goto out;
        }
        p->paths[at].weight += s->weight;
        p->paths[at].count += s->count;
        p->paths[at].samples++;
        if (GROW(p->selected, p->selected_cap, p->selected_samples + 1))
            goto out;
        p->selected[p->selected_samples].sample = (uint32_t)i;
        p->selected[p->selected_samples].path = at;
        p->total_weight += s->weight;
        p->total_count += s->count;
        if (!p->selected_samples || s->time < p->first_time)
            p->first_time = s->time;
        if (s->time > p->last_time)
            p->last_time = s->time;
        p->selected_samples++;
    }
    rc = 0;
out:
    map64_free(&path_of);
    return rc;
}

/* The trie is built from the paths sorted by their names, root first:
 * then the children of every node arrive together, and a path shares with
 * the one before it exactly their common prefix, so no index of children
 * is needed (with 100,000 distinct deep stacks such an index would take
 * more memory than everything else together). */
struct path_view {
    const struct profile *p;
    const struct prof_filter *f;
};

static uint32_t path_length(const struct path_view *v, const struct prof_path *path)
{
    return v->p->rec->stacks[path->stack].depth + (v->f->thread_roots ? 1 : 0);
}

/* The k-th name of a path, root first. */
static uint32_t path_name(const struct path_view *v, const struct prof_path *path, uint32_t k)
{
    const struct recording *r = v->p->rec;
    if (v->f->thread_roots) {
        if (k == 0)
            return v->p->thread_name[path->thread];
        k--;
    }
    struct rec_stack s = r->stacks[path->stack];
    /* frames are stored leaf first */
    uint32_t at = v->f->reverse ? k : s.depth - 1 - k;
    return v->p->frame_name[r->stack_frames[s.offset + at]];
}

static int by_names(const void *a, const void *b, void *ctx)
{
    const struct path_view *v = ctx;
    const struct prof_path *x = &v->p->paths[*(const uint32_t *)a];
    const struct prof_path *y = &v->p->paths[*(const uint32_t *)b];
    uint32_t nx = path_length(v, x), ny = path_length(v, y);
    for (uint32_t k = 0; k < nx && k < ny; k++) {
        uint32_t u = path_name(v, x, k), w = path_name(v, y, k);
        if (u != w)
            return u < w ? -1 : 1;
    }
    return nx < ny ? -1 : nx > ny;
}

static int build_tree(struct profile *p, const struct prof_filter *f)
{
    if (GROW(p->nodes, p->node_cap, 1))
        return -1;
    memset(&p->nodes[0], 0, sizeof p->nodes[0]);
    p->node_count = 1;
    int rc = -1;
    uint32_t *order = mem_alloc((p->path_count ? p->path_count : 1) * sizeof *order);
    uint32_t *chain = NULL; /* nodes of the previous path, root first */
    size_t chain_cap = 0, chain_len = 0;
    p->path_leaf = mem_alloc((p->path_count ? p->path_count : 1) * sizeof *p->path_leaf);
    if (!p->path_leaf || !order)
        goto out;
    struct path_view v = {p, f};
    for (size_t i = 0; i < p->path_count; i++)
        order[i] = (uint32_t)i;
    qsort_r(order, p->path_count, sizeof *order, by_names, &v);
    const struct prof_path *prev = NULL;
    for (size_t i = 0; i < p->path_count; i++) {
        const struct prof_path *path = &p->paths[order[i]];
        uint32_t n = path_length(&v, path);
        uint32_t keep = 0;
        if (prev) {
            uint32_t pn = (uint32_t)chain_len;
            while (keep < n && keep < pn && path_name(&v, path, keep) == path_name(&v, prev, keep))
                keep++;
        }
        uint32_t *grown = mem_grow(chain, &chain_cap, n ? n : 1, sizeof *chain);
        if (!grown)
            goto out;
        chain = grown;
        for (uint32_t k = keep; k < n; k++) {
            uint32_t parent = k ? chain[k - 1] : 0;
            if (p->node_count >= UINT32_MAX - 1 || GROW(p->nodes, p->node_cap, p->node_count + 1))
                goto out;
            uint32_t at = (uint32_t)p->node_count++;
            struct prof_node node = {path_name(&v, path, k), parent, 0,
                                     p->nodes[parent].first_child, 0, 0};
            p->nodes[at] = node;
            p->nodes[parent].first_child = at;
            chain[k] = at;
        }
        chain_len = n;
        p->nodes[0].total += path->weight;
        for (uint32_t k = 0; k < n; k++)
            p->nodes[chain[k]].total += path->weight;
        uint32_t leaf = n ? chain[n - 1] : 0;
        p->nodes[leaf].self += path->weight;
        p->path_leaf[order[i]] = leaf;
        prev = path;
    }
    rc = 0;
out:
    mem_free(order);
    mem_free(chain);
    return rc;
}

static void view_init(struct profiles *ps, struct profile *p, long event)
{
    memset(p, 0, sizeof *p);
    p->shared = &ps->shared;
    p->rec = &ps->shared.rec;
    p->names = &ps->shared.names;
    p->frame_name = ps->shared.frame_name;
    p->thread_name = ps->shared.thread_name;
    p->name_kind = ps->shared.name_kind;
    p->event = event;
}

static void view_free(struct profile *p)
{
    mem_free(p->paths);
    mem_free(p->nodes);
    mem_free(p->selected);
    mem_free(p->path_leaf);
    memset(p, 0, sizeof *p);
}

/* Which events get a view, and which is current.  Returns 0, or -1 with
 * the reason in err. */
static int choose_views(struct profiles *ps, const struct prof_filter *f, long *events,
                        size_t *count, char *err, size_t n)
{
    const struct recording *r = &ps->shared.rec;
    uint64_t per_event[256] = {0};
    for (size_t i = 0; i < r->sample_count; i++)
        per_event[r->samples[i].event]++;
    long wanted = -1;
    if (f->event) {
        wanted = rec_event_index(r, f->event);
        if (wanted < 0) {
            char have[256] = "";
            for (size_t i = 0; i < r->event_count; i++) {
                size_t used = strlen(have);
                snprintf(have + used, sizeof have - used, "%s%.*s", i ? ", " : "",
                         (int)r->events[i].name.len, r->events[i].name.p);
            }
            snprintf(err, n, "the recording has no '%s' event (it has: %s)", f->event,
                     have[0] ? have : "none");
            return -1;
        }
    }
    *count = 0;
    for (size_t i = 0; i < r->event_count; i++)
        if (per_event[i] || (long)i == wanted)
            events[(*count)++] = (long)i;
    if (*count == 0) /* nothing at all: one empty view */
        events[(*count)++] = r->event_count ? 0 : -1;
    ps->current = 0;
    for (size_t i = 0; i < *count; i++) {
        long e = events[i];
        if (e == wanted) {
            ps->current = i;
            break;
        }
        /* by default the sampled event (cpu, wall), else the first */
        if (wanted < 0 && e >= 0 && !r->events[e].recorded && r->events[events[ps->current]].recorded)
            ps->current = i;
    }
    return 0;
}

int prof_build(struct profiles *ps, struct recording *rec, const struct prof_filter *f, char *err,
               size_t err_size)
{
    memset(ps, 0, sizeof *ps);
    ps->shared.rec = *rec;
    memset(rec, 0, sizeof *rec);
    long events[256];
    size_t count = 0;
    uint8_t *keep = NULL;
    if (strtab_init(&ps->shared.names) < 0)
        goto oom;
    if (live_derive(&ps->shared.rec, f->has_at ? f->at_ns : UINT64_MAX, ps->shared.live_note,
                    sizeof ps->shared.live_note) < 0)
        goto oom;
    if (!f->native_raw && fold_recording(&ps->shared.rec) < 0)
        goto oom;
    if (choose_views(ps, f, events, &count, err, err_size) < 0) {
        prof_free(ps);
        return -1;
    }
    if (build_names(&ps->shared) < 0)
        goto oom;
    ps->views = mem_calloc(count, sizeof *ps->views);
    if (!ps->views)
        goto oom;
    ps->count = count;
    for (size_t i = 0; i < count; i++)
        view_init(ps, &ps->views[i], events[i]);
    keep = filter_samples(&ps->shared, &ps->views[0], f);
    if (!keep)
        goto oom;
    for (size_t i = 0; i < count; i++) {
        struct profile *p = &ps->views[i];
        p->views = ps->views;
        p->view_count = count;
        if (select_samples(p, f, keep) < 0 || build_tree(p, f) < 0)
            goto oom;
    }
    mem_free(keep);
    return 0;
oom:
    mem_free(keep);
    snprintf(err, err_size, "out of memory while aggregating the recording");
    prof_free(ps);
    return -1;
}

int prof_load(struct profiles *ps, const char *path, const struct prof_filter *f, char *err,
              size_t err_size)
{
    struct recording rec;
    if (rec_load_file(path, &rec, err, err_size) < 0) {
        memset(ps, 0, sizeof *ps);
        return -1;
    }
    return prof_build(ps, &rec, f, err, err_size);
}

int prof_load_many(struct profiles *ps, const char *const *paths, size_t n, long pid,
                   const struct prof_filter *f, char *err, size_t err_size)
{
    memset(ps, 0, sizeof *ps);
    struct recording *recs = mem_calloc(n ? n : 1, sizeof *recs);
    if (!recs) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        char why[400];
        if (rec_load_file(paths[i], &recs[kept], why, sizeof why) < 0) {
            snprintf(err, err_size, "%s: %s", paths[i], why);
            for (size_t k = 0; k < kept; k++)
                rec_free(&recs[k]);
            mem_free(recs);
            return -1;
        }
        if (pid > 0 && merge_pid_of(&recs[kept]) != pid) {
            rec_free(&recs[kept]);
            continue;
        }
        kept++;
    }
    if (!kept) {
        snprintf(err, err_size, "no recording of process %ld among those given", pid);
        mem_free(recs);
        return -1;
    }
    if (kept == 1) {
        struct recording one = recs[0];
        mem_free(recs);
        return prof_build(ps, &one, f, err, err_size);
    }
    /* each process folded on its own (fold.h), so that its root frame
     * stays the outermost of its stacks */
    for (size_t i = 0; i < kept && !f->native_raw; i++) {
        if (fold_recording(&recs[i]) < 0) {
            snprintf(err, err_size, "out of memory while folding the recordings");
            for (size_t k = 0; k < kept; k++)
                rec_free(&recs[k]);
            mem_free(recs);
            return -1;
        }
    }
    struct recording merged;
    int rc = merge_recordings(recs, kept, &merged, err, err_size);
    mem_free(recs);
    if (rc < 0)
        return -1;
    struct prof_filter folded = *f;
    folded.native_raw = 1; /* done above */
    return prof_build(ps, &merged, &folded, err, err_size);
}

void prof_free(struct profiles *ps)
{
    for (size_t i = 0; i < ps->count; i++)
        view_free(&ps->views[i]);
    mem_free(ps->views);
    rec_free(&ps->shared.rec);
    strtab_free(&ps->shared.names);
    mem_free(ps->shared.frame_name);
    mem_free(ps->shared.name_kind);
    mem_free(ps->shared.thread_name);
    memset(ps, 0, sizeof *ps);
}

size_t prof_node_path(const struct profile *p, uint32_t node, uint32_t **out, size_t *cap)
{
    size_t depth = 0;
    for (uint32_t n = node; n != 0; n = p->nodes[n].parent)
        depth++;
    uint32_t *grown = mem_grow(*out, cap, depth ? depth : 1, sizeof *grown);
    if (!grown)
        return SIZE_MAX;
    *out = grown;
    size_t at = depth;
    for (uint32_t n = node; n != 0; n = p->nodes[n].parent)
        grown[--at] = p->nodes[n].name;
    return depth;
}

int prof_node_counts(const struct profile *p, uint64_t **self, uint64_t **total)
{
    size_t n = p->node_count ? p->node_count : 1;
    *self = mem_calloc(n, sizeof **self);
    *total = mem_calloc(n, sizeof **total);
    if (!*self || !*total) {
        mem_free(*self);
        mem_free(*total);
        *self = *total = NULL;
        return -1;
    }
    for (size_t i = 0; i < p->path_count; i++)
        (*self)[p->path_leaf[i]] += p->paths[i].count;
    memcpy(*total, *self, n * sizeof **total);
    /* a parent comes before its children (build_tree): one pass upwards */
    for (size_t i = p->node_count; i-- > 1;)
        (*total)[p->nodes[i].parent] += (*total)[i];
    return 0;
}

static int by_name(const void *a, const void *b, void *ctx)
{
    const struct profile *p = ctx;
    const struct prof_node *x = &p->nodes[*(const uint32_t *)a];
    const struct prof_node *y = &p->nodes[*(const uint32_t *)b];
    return strcmp(prof_name(p, x->name), prof_name(p, y->name));
}

static int by_total(const void *a, const void *b, void *ctx)
{
    const struct profile *p = ctx;
    const struct prof_node *x = &p->nodes[*(const uint32_t *)a];
    const struct prof_node *y = &p->nodes[*(const uint32_t *)b];
    if (x->total != y->total)
        return x->total < y->total ? 1 : -1;
    return by_name(a, b, ctx);
}

size_t prof_children(const struct profile *p, uint32_t node, enum prof_order order,
                     uint32_t **out, size_t *cap)
{
    size_t n = 0;
    for (uint32_t c = p->nodes[node].first_child; c; c = p->nodes[c].next_sibling) {
        uint32_t *grown = mem_grow(*out, cap, n + 1, sizeof **out);
        if (!grown)
            return SIZE_MAX;
        *out = grown;
        (*out)[n++] = c;
    }
    if (n > 1)
        qsort_r(*out, n, sizeof **out, order == PROF_BY_NAME ? by_name : by_total, (void *)p);
    return n;
}

void prof_filter_free(struct prof_filter *f)
{
    if (f->has_include)
        regfree(&f->include);
    if (f->has_exclude)
        regfree(&f->exclude);
    f->has_include = f->has_exclude = 0;
}
