/*
 * out_top: the flat table: for every method, its self share (samples where
 * it is the leaf) and total share (samples where it is anywhere on the
 * stack, counted once per sample however deep the recursion), sorted by
 * self then total.  Headed by what the profile covers and what was lost.
 * An event with a count beside its value (alloc: bytes and objects) gets
 * the count's columns too.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/report.h"
#include "common/mem.h"

struct row {
    uint32_t name;
    uint64_t self;
    uint64_t total;
    uint64_t self_count;
    uint64_t total_count;
};

static int by_self(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (x->self != y->self)
        return x->self < y->self ? 1 : -1;
    if (x->total != y->total)
        return x->total < y->total ? 1 : -1;
    return x->name < y->name ? -1 : x->name > y->name;
}

int report_top(const struct profile *p, const struct report_options *o, FILE *out)
{
    const struct recording *r = p->rec;
    size_t names = p->names->count;
    struct row *rows = mem_calloc(names, sizeof *rows);
    size_t *stamp = mem_calloc(names, sizeof *stamp); /* path index + 1 that last counted it */
    if (!rows || !stamp) {
        mem_free(rows);
        mem_free(stamp);
        cli_error("out of memory while writing the top table");
        return -1;
    }
    for (size_t i = 0; i < names; i++)
        rows[i].name = (uint32_t)i;
    for (size_t i = 0; i < p->path_count; i++) {
        const struct prof_path *path = &p->paths[i];
        struct rec_stack s = r->stacks[path->stack];
        for (uint32_t k = 0; k < s.depth; k++) {
            uint32_t name = p->frame_name[r->stack_frames[s.offset + k]];
            if (k == 0) {
                rows[name].self += path->weight;
                rows[name].self_count += path->count;
            }
            if (stamp[name] != i + 1) {
                stamp[name] = i + 1;
                rows[name].total += path->weight;
                rows[name].total_count += path->count;
            }
        }
    }
    qsort(rows, names, sizeof *rows, by_self);

    char total[32], span[32];
    report_format_value(p, p->total_weight, total, sizeof total);
    double seconds = p->selected_samples ? (double)(p->last_time - p->first_time) / 1e9 : 0;
    snprintf(span, sizeof span, "%.2f s", seconds);
    fprintf(out, "# %s: %llu samples, %s, over %s, %zu threads\n", prof_event_name(p),
            (unsigned long long)p->selected_samples, total, span, r->thread_count);
    char losses[256];
    report_losses(p, losses, sizeof losses);
    if (losses[0])
        fprintf(out, "# lost: %s\n", losses);
    if (r->status != REC_COMPLETE)
        fprintf(out, "# recording %s: %s\n", rec_status_name(r->status), r->problem);
    const struct rec_str *ended = rec_info(r, FMT_INFO_ENDED_BY);
    if (ended && ended->len)
        fprintf(out, "# ended by %.*s\n", (int)ended->len, ended->p);
    char note[512];
    report_note(p, note, sizeof note);
    if (note[0])
        fprintf(out, "# %s\n", note);
    if (report_biased(p))
        fprintf(out, "# %s\n", report_biased(p));
    /* a count beside the value: objects of an allocation */
    int counts = p->event >= 0 && r->events[p->event].recorded && r->events[p->event].value_count > 1;
    const char *count_name = prof_count_unit(p);
    char self_c[32], total_c[32];
    snprintf(self_c, sizeof self_c, "self %s", count_name);
    snprintf(total_c, sizeof total_c, "total %s", count_name);
    if (counts)
        fprintf(out, "%8s %8s %10s %10s %13s %13s  %s\n", "self%", "total%", "self", "total",
                self_c, total_c, "method");
    else
        fprintf(out, "%8s %8s %10s %10s  %s\n", "self%", "total%", "self", "total", "method");
    double all = p->total_weight ? (double)p->total_weight : 1;
    long shown = 0;
    for (size_t i = 0; i < names; i++) {
        if (!rows[i].total || p->name_kind[rows[i].name] == 0)
            continue;
        if (o->limit && shown >= o->limit)
            break;
        char self_v[32], total_v[32];
        report_format_value(p, rows[i].self, self_v, sizeof self_v);
        report_format_value(p, rows[i].total, total_v, sizeof total_v);
        if (counts)
            fprintf(out, "%7.2f%% %7.2f%% %10s %10s %13llu %13llu  %s\n",
                    100.0 * (double)rows[i].self / all, 100.0 * (double)rows[i].total / all, self_v,
                    total_v, (unsigned long long)rows[i].self_count,
                    (unsigned long long)rows[i].total_count, prof_name(p, rows[i].name));
        else
            fprintf(out, "%7.2f%% %7.2f%% %10s %10s  %s\n", 100.0 * (double)rows[i].self / all,
                    100.0 * (double)rows[i].total / all, self_v, total_v,
                    prof_name(p, rows[i].name));
        shown++;
    }
    mem_free(rows);
    mem_free(stamp);
    return 0;
}
