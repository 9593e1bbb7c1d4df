/*
 * out_collapsed: collapsed stacks, the lingua franca of flame graph tools:
 * one line per distinct call path, root first, frames joined by ';', then a
 * space and the path's weight ("Main;Work;Hot 42").  Weights are in the
 * event's periods (samples of the interval for cpu and wall), or with
 * --weight count the event's count (calls of a traced path, objects of an
 * allocation, samples).  Lines come
 * in depth-first order with siblings sorted by name, so the output is
 * deterministic.  ';' and line breaks inside names would break the format
 * and are written as '_'.
 */
#include <string.h>

#include "cli/cli.h"
#include "cli/report.h"
#include "common/mem.h"

struct level {
    uint32_t *children;
    size_t cap, count, next;
    size_t path_len; /* length of the path up to and including this level's node */
};

static int append_name(char **path, size_t *cap, size_t at, const char *name, size_t *len_out)
{
    size_t n = strlen(name);
    char *grown = mem_grow(*path, cap, at + n + 2, 1);
    if (!grown)
        return -1;
    *path = grown;
    size_t o = at;
    if (at)
        grown[o++] = ';';
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        grown[o++] = (c == ';' || c == '\n' || c == '\r') ? '_' : c;
    }
    grown[o] = '\0';
    *len_out = o;
    return 0;
}

int report_collapsed(const struct profile *p, const struct report_options *o, FILE *out)
{
    int rc = -1;
    uint64_t *self_count = NULL, *total_count = NULL;
    struct level *levels = NULL;
    size_t level_cap = 0, level_used = 0, depth = 0;
    char *path = NULL;
    size_t path_cap = 0;

    if (o->by_count && prof_node_counts(p, &self_count, &total_count) < 0)
        goto out;
    /* level 0 is the root, which has no name */
    if (!(levels = mem_grow(NULL, &level_cap, 1, sizeof *levels)))
        goto out;
    memset(&levels[0], 0, sizeof levels[0]);
    level_used = 1;
    levels[0].count = prof_children(p, 0, PROF_BY_NAME, &levels[0].children, &levels[0].cap);
    if (levels[0].count == SIZE_MAX)
        goto out;
    depth = 1;
    while (depth) {
        struct level *l = &levels[depth - 1];
        if (l->next == l->count) {
            depth--;
            continue;
        }
        uint32_t node = l->children[l->next++];
        struct level *grown = mem_grow(levels, &level_cap, depth + 1, sizeof *levels);
        if (!grown)
            goto out;
        levels = grown;
        l = &levels[depth - 1];
        struct level *c = &levels[depth];
        if (depth == level_used) {
            memset(c, 0, sizeof *c);
            level_used++;
        }
        size_t len;
        if (append_name(&path, &path_cap, l->path_len, prof_name(p, p->nodes[node].name), &len))
            goto out;
        uint64_t weight = self_count ? self_count[node] : p->nodes[node].self;
        if (weight)
            fprintf(out, "%s %llu\n", path, (unsigned long long)weight);
        c->path_len = len;
        c->next = 0;
        c->count = prof_children(p, node, PROF_BY_NAME, &c->children, &c->cap);
        if (c->count == SIZE_MAX)
            goto out;
        depth++;
    }
    rc = 0;
out:
    for (size_t i = 0; i < level_used; i++)
        mem_free(levels[i].children);
    mem_free(levels);
    mem_free(path);
    mem_free(self_count);
    mem_free(total_count);
    if (rc < 0)
        cli_error("out of memory while writing collapsed stacks");
    return rc;
}
