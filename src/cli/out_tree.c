/*
 * out_tree: the call tree as indented text, heaviest callee first:
 *
 *   total%   self%  name
 *   98.20%   0.00%  Program.Main
 *   61.00%  60.90%    Work.Alpha
 *
 * Nodes below --min (a share of the whole, 0.5% by default) are left out,
 * and what each node lost that way is shown in one "[N more below X%]"
 * line, so the shares of the lines printed still add up.
 *
 * A recorded event's numbers are exact, not estimates from samples, so its
 * tree shows them beside the shares: the total and self value (time,
 * bytes, calls) and, for an event with a count, the count that ends at the
 * node.  For the calls event of `record --trace` that is each node's own
 * calls on its path, with its inclusive (total) and self time:
 *
 *   total%   self%      total       self      calls  name
 *   76.00%  76.00%    3.1 ms     3.1 ms    1000000      TraceApp.Calls.Leaf
 */
#include <string.h>

#include "cli/cli.h"
#include "cli/report.h"
#include "common/mem.h"

struct level {
    uint32_t *children;
    size_t cap, count, next;
    uint64_t hidden;    /* weight of children below the threshold */
    size_t hidden_count;
};

/* The columns of exact numbers a recorded event adds; NULL self_count
 * when it has no count. */
struct exact {
    int on;
    const uint64_t *self_count;
};

static void line(FILE *out, const struct profile *p, const struct exact *x, uint32_t node,
                 size_t depth, double all)
{
    const struct prof_node *n = &p->nodes[node];
    fprintf(out, "%7.2f%% %7.2f%%", 100.0 * (double)n->total / all, 100.0 * (double)n->self / all);
    if (x->on) {
        char total[32], self[32];
        report_format_value(p, n->total, total, sizeof total);
        report_format_value(p, n->self, self, sizeof self);
        fprintf(out, " %10s %10s", total, self);
        if (x->self_count)
            fprintf(out, " %10llu", (unsigned long long)x->self_count[node]);
    }
    fprintf(out, "  %*s%s\n", (int)(2 * depth), "", prof_name(p, n->name));
}

int report_tree(const struct profile *p, const struct report_options *o, FILE *out)
{
    double all = p->total_weight ? (double)p->total_weight : 1;
    double min = o->min_percent;
    struct level *levels = NULL;
    size_t level_cap = 0, used = 0, depth;
    int rc = -1;
    uint64_t *self_count = NULL, *total_count = NULL;
    const struct rec_event *e = p->event >= 0 ? &p->rec->events[p->event] : NULL;
    struct exact x = {e && e->recorded, NULL};
    if (x.on && e->value_count > 1) {
        if (prof_node_counts(p, &self_count, &total_count) < 0)
            goto out;
        x.self_count = self_count;
    }

    char total[32];
    report_format_value(p, p->total_weight, total, sizeof total);
    if (x.self_count)
        fprintf(out, "# %s: %s, %llu %s in %llu records; nodes under %.2f%% left out\n",
                prof_event_name(p), total, (unsigned long long)p->total_count,
                prof_count_name(p), (unsigned long long)p->selected_samples, min);
    else if (x.on)
        fprintf(out, "# %s: %s in %llu records; nodes under %.2f%% left out\n", prof_event_name(p),
                total, (unsigned long long)p->selected_samples, min);
    else
        fprintf(out, "# %s: %llu samples, %s; nodes under %.2f%% left out\n", prof_event_name(p),
                (unsigned long long)p->selected_samples, total, min);
    char losses[256];
    report_losses(p, losses, sizeof losses);
    if (losses[0])
        fprintf(out, "# lost: %s\n", losses);
    fprintf(out, "%8s %8s", "total%", "self%");
    if (x.on)
        fprintf(out, " %10s %10s", "total", "self");
    if (x.self_count)
        fprintf(out, " %10s", prof_count_name(p));
    fprintf(out, "  %s\n", "name");

    if (!(levels = mem_grow(NULL, &level_cap, 1, sizeof *levels)))
        goto out;
    memset(levels, 0, sizeof *levels);
    used = 1;
    levels[0].count = prof_children(p, 0, PROF_BY_TOTAL, &levels[0].children, &levels[0].cap);
    if (levels[0].count == SIZE_MAX)
        goto out;
    depth = 1;
    while (depth) {
        struct level *l = &levels[depth - 1];
        if (l->next == l->count) {
            if (l->hidden_count)
                fprintf(out, "%7.2f%% %8s%*s  %*s[%zu more below %.2f%%]\n",
                        100.0 * (double)l->hidden / all, "",
                        (x.on ? 22 : 0) + (x.self_count ? 11 : 0), "", (int)(2 * (depth - 1)),
                        "", l->hidden_count, min);
            depth--;
            continue;
        }
        uint32_t node = l->children[l->next++];
        const struct prof_node *n = &p->nodes[node];
        double share = 100.0 * (double)n->total / all;
        if (share < min) {
            l->hidden += n->total;
            l->hidden_count++;
            continue;
        }
        line(out, p, &x, node, depth - 1, all);
        struct level *grown = mem_grow(levels, &level_cap, depth + 1, sizeof *levels);
        if (!grown)
            goto out;
        levels = grown;
        struct level *c = &levels[depth];
        if (depth == used) {
            memset(c, 0, sizeof *c);
            used++;
        }
        c->next = 0;
        c->hidden = 0;
        c->hidden_count = 0;
        c->count = prof_children(p, node, PROF_BY_TOTAL, &c->children, &c->cap);
        if (c->count == SIZE_MAX)
            goto out;
        depth++;
    }
    rc = 0;
out:
    for (size_t i = 0; i < used; i++)
        mem_free(levels[i].children);
    mem_free(levels);
    mem_free(self_count);
    mem_free(total_count);
    if (rc < 0)
        cli_error("out of memory while writing the tree");
    return rc;
}
