/*
 * out_flamegraph: the interactive flame graph, one self-contained HTML file.
 *
 * The page (src/cli/flamegraph.html, built into the program) does the
 * drawing, zooming, searching, the inverted view, the thread filter and
 * the timeline in the browser; this writer gives it the data as JSON in
 * place of the template's placeholder: the display names and their kinds
 * (managed, native, runtime ...), a call tree (each node's parent and
 * name; a parent's number is smaller than its children's, and is sent as
 * their difference, "up"), the thread names, and each sample's (leaf
 * node, thread), time, weight and count (flame_timeline.h), so that the
 * page can redraw the graph from any range of time; the same tree and
 * samples for every other event of the recording ("views": the page's
 * event selector switches between cpu, alloc, live ...); and the runtime's
 * events as marks on the timeline.  A path is stored once as a chain of
 * nodes, a sample as a few numbers.  The arrays that grow with the tree or
 * the samples are packed (json_pack: base-32 digits in a string, a third
 * of a JSON array's size, and one loop for the page to read).
 *
 * With --diff BASE, the tree holds the paths of both profiles, matched by
 * name, and the baseline's values come as a list per (leaf, thread); the
 * page sizes frames by the new profile and colours them by the change of
 * their share (and has no timeline: the baseline is another run).
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/flame_timeline.h"
#include "cli/json.h"
#include "cli/report.h"
#include "cli/resources.h"
#include "cli/timeline.h"
#include "common/map.h"
#include "common/mem.h"
#include "common/strtab.h"

struct fg {
    struct strtab names;   /* display names of both profiles; id 0 = "" */
    uint8_t *kinds;
    size_t kinds_cap;
    uint32_t *parent, *node_name; /* node 0 is the root */
    size_t nodes, nodes_cap;
    struct map64 child;    /* baseline: parent << 32 | name -> node */
    struct strtab threads; /* diff: the thread labels of both; id 0 unused */
    struct map64 leaf_index; /* baseline: thread << 32 | leaf -> entry */
    uint32_t *leaf, *thread; /* the baseline's (leaf, thread, value) entries */
    uint64_t *value;
    size_t entries, entries_cap;
    uint32_t *path;        /* scratch */
    size_t path_cap;
};

static uint32_t fg_name(struct fg *g, const char *s, uint8_t kind)
{
    int is_new;
    uint32_t id = strtab_intern(&g->names, s, strlen(s), &is_new);
    if (id == UINT32_MAX)
        return UINT32_MAX;
    uint8_t *grown = mem_grow(g->kinds, &g->kinds_cap, (size_t)id + 1, 1);
    if (!grown)
        return UINT32_MAX;
    g->kinds = grown;
    if (is_new)
        g->kinds[id] = kind;
    return id;
}

static uint32_t fg_child(struct fg *g, uint32_t parent, uint32_t name)
{
    uint64_t key = (uint64_t)parent << 32 | name;
    uint32_t at;
    if (map64_get(&g->child, key, &at))
        return at;
    size_t cap = g->nodes_cap;
    uint32_t *p = mem_grow(g->parent, &cap, g->nodes + 1, sizeof *p);
    if (!p)
        return UINT32_MAX;
    g->parent = p;
    uint32_t *n = mem_grow(g->node_name, &g->nodes_cap, g->nodes + 1, sizeof *n);
    if (!n)
        return UINT32_MAX;
    g->node_name = n;
    at = (uint32_t)g->nodes++;
    g->parent[at] = parent;
    g->node_name[at] = name;
    if (map64_put(&g->child, key, at) < 0)
        return UINT32_MAX;
    return at;
}

/* Appends one (leaf, thread, value) entry of the baseline. */
static int fg_entry(struct fg *g, uint32_t leaf, uint32_t thread, uint64_t value)
{
    size_t c1 = g->entries_cap, c2 = g->entries_cap;
    uint32_t *l = mem_grow(g->leaf, &c1, g->entries + 1, sizeof *l);
    if (!l)
        return -1;
    g->leaf = l;
    uint32_t *t = mem_grow(g->thread, &c2, g->entries + 1, sizeof *t);
    if (!t)
        return -1;
    g->thread = t;
    uint64_t *v = mem_grow(g->value, &g->entries_cap, g->entries + 1, sizeof *v);
    if (!v)
        return -1;
    g->value = v;
    g->leaf[g->entries] = leaf;
    g->thread[g->entries] = thread;
    g->value[g->entries] = value;
    g->entries++;
    return 0;
}

/* A thread's label id (1-based) in the page's list. */
static uint32_t fg_thread(struct fg *g, const struct profile *p, uint32_t thread)
{
    char label[160];
    timeline_thread_name(p, thread, label, sizeof label);
    int is_new;
    return strtab_intern(&g->threads, label, strlen(label), &is_new);
}

/* The profile's own call tree becomes the page's (names mapped to the
 * shared name table, node numbers kept), and its threads the page's, by
 * label (*thread_map: the recording's thread index -> the page's). */
static int fg_add_main(struct fg *g, const struct profile *p, uint32_t **thread_map)
{
    int rc = -1;
    uint32_t *name_map = mem_calloc(p->names->count ? p->names->count : 1, sizeof *name_map);
    *thread_map = mem_calloc(p->rec->thread_count ? p->rec->thread_count : 1, sizeof **thread_map);
    if (!name_map || !*thread_map)
        goto out;
    for (size_t n = 1; n < p->names->count; n++) {
        name_map[n] = fg_name(g, prof_name(p, (uint32_t)n), p->name_kind[n]);
        if (name_map[n] == UINT32_MAX)
            goto out;
    }
    size_t cap = g->nodes_cap;
    uint32_t *parent = mem_grow(g->parent, &cap, p->node_count, sizeof *parent);
    if (!parent)
        goto out;
    g->parent = parent;
    uint32_t *name = mem_grow(g->node_name, &g->nodes_cap, p->node_count, sizeof *name);
    if (!name)
        goto out;
    g->node_name = name;
    for (size_t i = 0; i < p->node_count; i++) {
        g->parent[i] = i ? p->nodes[i].parent : 0;
        g->node_name[i] = i ? name_map[p->nodes[i].name] : 0;
    }
    g->nodes = p->node_count ? p->node_count : 1;
    for (size_t t = 0; t < p->rec->thread_count; t++) {
        uint32_t id = fg_thread(g, p, (uint32_t)t);
        if (id == UINT32_MAX)
            goto out;
        (*thread_map)[t] = id - 1; /* 0-based in the page */
    }
    rc = 0;
out:
    mem_free(name_map);
    return rc;
}

/* Adds the baseline's samples, its paths matched by name into the tree. */
static int fg_add_base(struct fg *g, const struct profile *p)
{
    for (size_t i = 1; i < g->nodes; i++)
        if (map64_put(&g->child, (uint64_t)g->parent[i] << 32 | g->node_name[i], (uint32_t)i) < 0)
            return -1;
    uint32_t *leaf_of = mem_alloc((p->path_count ? p->path_count : 1) * sizeof *leaf_of);
    uint32_t *thread_of = mem_calloc(p->rec->thread_count ? p->rec->thread_count : 1, sizeof *thread_of);
    int rc = -1;
    if (!leaf_of || !thread_of)
        goto out;
    for (size_t i = 0; i < p->path_count; i++) {
        size_t depth = prof_node_path(p, p->path_leaf[i], &g->path, &g->path_cap);
        if (depth == SIZE_MAX)
            goto out;
        uint32_t node = 0;
        for (size_t d = 0; d < depth && node != UINT32_MAX; d++) {
            uint32_t name = fg_name(g, prof_name(p, g->path[d]), p->name_kind[g->path[d]]);
            node = name == UINT32_MAX ? UINT32_MAX : fg_child(g, node, name);
        }
        if (node == UINT32_MAX)
            goto out;
        leaf_of[i] = node;
    }
    for (size_t i = 0; i < p->selected_samples; i++) {
        const struct prof_sample *s = &p->selected[i];
        const struct rec_sample *rs = &p->rec->samples[s->sample];
        if (!thread_of[rs->thread] && (thread_of[rs->thread] = fg_thread(g, p, rs->thread)) == UINT32_MAX)
            goto out;
        uint32_t th = thread_of[rs->thread], leaf = leaf_of[s->path];
        uint64_t key = (uint64_t)th << 32 | leaf;
        uint32_t at;
        if (!map64_get(&g->leaf_index, key, &at)) {
            at = (uint32_t)g->entries;
            if (fg_entry(g, leaf, th, 0) < 0 || map64_put(&g->leaf_index, key, at) < 0)
                goto out;
        }
        g->value[at] += (uint64_t)prof_value(p, rs->weight);
    }
    rc = 0;
out:
    mem_free(leaf_of);
    mem_free(thread_of);
    return rc;
}

static void fg_free(struct fg *g)
{
    strtab_free(&g->names);
    strtab_free(&g->threads);
    map64_free(&g->child);
    map64_free(&g->leaf_index);
    mem_free(g->kinds);
    mem_free(g->parent);
    mem_free(g->node_name);
    mem_free(g->leaf);
    mem_free(g->thread);
    mem_free(g->value);
    mem_free(g->path);
}

/* The part of the page's data both layouts share: what the profile is,
 * and the name table with each name's kind.  Leaves the object open. */
static void header_json(FILE *out, const struct fg *g, const struct profile *p)
{
    char title[512];
    report_title(p, title, sizeof title);
    fputs("{\"title\":", out);
    json_string(out, title);
    fputs(",\"names\":[", out);
    for (size_t i = 0; i < g->names.count; i++) {
        if (i)
            fputc(',', out);
        json_string(out, i ? g->names.strs[i] : "");
    }
    fputs("],\"kinds\":[", out);
    for (size_t i = 0; i < g->names.count; i++)
        fprintf(out, i ? ",%u" : "%u", i ? g->kinds[i] : 0);
    fputc(']', out);
}

/* What the page says about a view: its event, unit, losses and note, and
 * what it can be weighed by: its value ("time", "bytes" or the value's
 * name) and, when it has one, its count ("samples", "calls", "objects"). */
static void view_header(FILE *out, const struct profile *p)
{
    char losses[512], note[1024];
    report_losses(p, losses, sizeof losses);
    report_note(p, note, sizeof note);
    if (report_biased(p))
        snprintf(note + strlen(note), sizeof note - strlen(note), "%s%s", note[0] ? "; " : "",
                 report_biased(p));
    if (report_runtime_change(p->rec))
        snprintf(note + strlen(note), sizeof note - strlen(note), "%s%s", note[0] ? "; " : "",
                 report_runtime_change(p->rec));
    fputs("\"event\":", out);
    json_string(out, prof_event_name(p));
    fputs(",\"unit\":", out);
    json_string(out, prof_unit(p));
    fputs(",\"lost\":", out);
    json_string(out, losses);
    fputs(",\"note\":", out);
    json_string(out, note);
    const struct rec_event *e = p->event >= 0 ? &p->rec->events[p->event] : NULL;
    const char *unit = prof_unit(p);
    char value[64];
    if (!strcmp(unit, "ns"))
        snprintf(value, sizeof value, "time");
    else if (!strcmp(unit, "bytes"))
        snprintf(value, sizeof value, "bytes");
    else if (e && e->recorded)
        snprintf(value, sizeof value, "%.*s", (int)e->value_names[0].len, e->value_names[0].p);
    else
        snprintf(value, sizeof value, "value");
    fputs(",\"value\":", out);
    json_string(out, value);
    if (e && (!e->recorded || e->value_count > 1)) {
        fputs(",\"count\":", out);
        json_string(out, prof_count_name(p));
    }
}

/* A view's tree, names mapped by name_map, and its samples
 * (flame_timeline.h). */
static int view_json(FILE *out, const struct profile *p, const uint32_t *name_map)
{
    /* each node's distance to its parent, mostly 1: far shorter than the
     * parents' own numbers */
    size_t count = p->node_count ? p->node_count : 1;
    fputs("\"up\":\"", out);
    json_pack(out, count);
    json_pack(out, 0);
    for (size_t i = 1; i < p->node_count; i++)
        json_pack(out, i - p->nodes[i].parent);
    fputs("\",\"node\":\"", out);
    json_pack(out, count);
    json_pack(out, 0);
    for (size_t i = 1; i < p->node_count; i++)
        json_pack(out, name_map[p->nodes[i].name]);
    fputs("\",", out);
    return flame_timeline_samples(out, p, NULL);
}

/* With a baseline: the two profiles' paths in one tree, the new one's
 * samples and the baseline's values per (leaf, thread). */
static int write_diff(FILE *out, const struct fg *g, const struct profile *p,
                      const uint32_t *thread_map)
{
    header_json(out, g, p);
    fputc(',', out);
    view_header(out, p);
    fputs(",\"threads\":[", out);
    for (size_t i = 1; i < g->threads.count; i++) {
        if (i > 1)
            fputc(',', out);
        json_string(out, g->threads.strs[i]);
    }
    fputs("],\"up\":\"", out);
    json_pack(out, g->nodes);
    for (size_t i = 0; i < g->nodes; i++)
        json_pack(out, i - g->parent[i]);
    fputs("\",\"node\":\"", out);
    json_pack(out, g->nodes);
    for (size_t i = 0; i < g->nodes; i++)
        json_pack(out, g->node_name[i]);
    fputs("\",", out);
    if (flame_timeline_samples(out, p, thread_map) < 0)
        return -1;
    fputs(",\"base\":[", out);
    for (size_t i = 0; i < g->entries; i++) {
        json_uint(out, g->leaf[i], i == 0);
        json_uint(out, g->thread[i] - 1, 0); /* 0-based in the page */
        json_uint(out, g->value[i], 0);
    }
    fputs("]}", out);
    return 0;
}

/* Without a baseline: the current view's tree, every other event's (cpu,
 * alloc, live ...) in "views", for the page's event selector, and the
 * timeline's marks. */
static int write_single(FILE *out, const struct profile *p, const struct report_options *o,
                        struct fg *g)
{
    int rc = -1;
    uint32_t *name_map = mem_calloc(p->names->count ? p->names->count : 1, sizeof *name_map);
    if (!name_map)
        goto out;
    for (size_t n = 1; n < p->names->count; n++) {
        name_map[n] = fg_name(g, prof_name(p, (uint32_t)n), p->name_kind[n]);
        if (name_map[n] == UINT32_MAX)
            goto out;
    }
    header_json(out, g, p);
    fputc(',', out);
    view_header(out, p);
    fprintf(out, ",\"byCount\":%s,\"threads\":[", o->by_count ? "true" : "false");
    for (size_t t = 0; t < p->rec->thread_count; t++) {
        char label[160];
        timeline_thread_name(p, (uint32_t)t, label, sizeof label);
        if (t)
            fputc(',', out);
        json_string(out, label);
    }
    fputs("],", out);
    if (view_json(out, p, name_map) < 0)
        goto out;
    fputs(",\"base\":null,\"views\":[", out);
    for (size_t i = 0; i < p->view_count; i++) {
        const struct profile *v = &p->views[i];
        fputs(i ? ",{" : "{", out);
        view_header(out, v);
        if (v == p) {
            fputs(",\"current\":true}", out);
            continue;
        }
        fputc(',', out);
        if (view_json(out, v, name_map) < 0)
            goto out;
        fputc('}', out);
    }
    fputs("],", out);
    if (flame_timeline_marks(out, p) < 0)
        goto out;
    fputc('}', out);
    rc = 0;
out:
    mem_free(name_map);
    return rc;
}

int report_flamegraph(const struct profile *p, const struct report_options *o, FILE *out)
{
    struct fg g;
    memset(&g, 0, sizeof g);
    map64_init(&g.child);
    map64_init(&g.leaf_index);
    uint32_t *thread_map = NULL;
    int rc = -1;
    if (strtab_init(&g.names) < 0 || strtab_init(&g.threads) < 0)
        goto out;
    const char *marker = strstr(flamegraph_html, FLAMEGRAPH_PLACEHOLDER);
    if (!marker) {
        cli_error("the flame graph template has no data placeholder (a build problem)");
        goto out;
    }
    if (o->base && (fg_add_main(&g, p, &thread_map) < 0 || fg_add_base(&g, o->base) < 0))
        goto out;
    fwrite(flamegraph_html, 1, (size_t)(marker - flamegraph_html), out);
    if (o->base ? write_diff(out, &g, p, thread_map) < 0 : write_single(out, p, o, &g) < 0)
        goto out;
    const char *rest = marker + strlen(FLAMEGRAPH_PLACEHOLDER);
    fwrite(rest, 1, flamegraph_html_len - (size_t)(rest - flamegraph_html), out);
    rc = 0;
out:
    if (rc < 0)
        cli_error("out of memory while writing the flame graph");
    mem_free(thread_map);
    fg_free(&g);
    return rc;
}
