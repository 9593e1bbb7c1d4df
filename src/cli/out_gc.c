/*
 * out_gc: `report -f gc`, every collection of a recording made with -e gc:
 * its number, start, generation, kind, reason, whether it compacted, the
 * pause the program felt for it (the suspensions attributed to it), how
 * long the collection ran, and the heap's generation sizes after it; headed
 * by the totals per generation, the pauses' total, percentiles and share
 * of the run.  A background collection runs while the program does, so its
 * time is mostly not pause.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/gc_table.h"
#include "cli/report.h"
#include "common/mem.h"

static void size_text(uint64_t v, char *out, size_t size)
{
    if (v >= 1024ull * 1024 * 1024)
        snprintf(out, size, "%.2fG", (double)v / (1024.0 * 1024 * 1024));
    else if (v >= 1024ull * 1024)
        snprintf(out, size, "%.1fM", (double)v / (1024.0 * 1024));
    else
        snprintf(out, size, "%.1fK", (double)v / 1024.0);
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted values. */
static uint64_t percentile(const uint64_t *v, size_t n, double q)
{
    if (!n)
        return 0;
    size_t rank = (size_t)(q * (double)n + 0.999999);
    if (rank < 1)
        rank = 1;
    return v[rank > n ? n - 1 : rank - 1];
}

int report_gc(const struct profile *p, const struct report_options *o, FILE *out)
{
    struct gc_table t;
    int has = gc_table_load(p->rec, o->from_ns, o->to_ns, &t);
    if (has < 0) {
        cli_error("out of memory while reading the collections");
        return -1;
    }
    if (!has) {
        cli_error("the recording has no collections (record with -e gc)");
        return -1;
    }
    uint64_t per_gen[3] = {0}, background = 0, compacting = 0;
    for (size_t i = 0; i < t.count; i++) {
        if (t.rows[i].generation < 3)
            per_gen[t.rows[i].generation]++;
        background += t.rows[i].kind == 1;
        compacting += t.rows[i].compacting == 1;
    }
    uint64_t *lengths = mem_alloc((t.pause_count ? t.pause_count : 1) * sizeof *lengths);
    if (!lengths) {
        gc_table_free(&t);
        cli_error("out of memory while reading the collections");
        return -1;
    }
    uint64_t paused = 0;
    for (size_t i = 0; i < t.pause_count; i++) {
        lengths[i] = t.pauses[i].duration;
        paused += lengths[i];
    }
    qsort(lengths, t.pause_count, sizeof *lengths, by_value);
    uint64_t span = t.run_ns;
    if (o->to_ns && o->to_ns < span)
        span = o->to_ns;
    span = span > o->from_ns ? span - o->from_ns : 0;
    fprintf(out,
            "# gc: %zu collections over %.2f s: gen0 %llu, gen1 %llu, gen2 %llu; %llu background, "
            "%llu compacting\n",
            t.count, (double)span / 1e9, (unsigned long long)per_gen[0],
            (unsigned long long)per_gen[1], (unsigned long long)per_gen[2],
            (unsigned long long)background, (unsigned long long)compacting);
    fprintf(out,
            "# pauses: %zu, %.2f ms in all, %.2f%% of the run; p50 %.2f ms, p90 %.2f ms, p99 "
            "%.2f ms, max %.2f ms\n",
            t.pause_count, (double)paused / 1e6, span ? 100.0 * (double)paused / (double)span : 0,
            (double)percentile(lengths, t.pause_count, 0.5) / 1e6,
            (double)percentile(lengths, t.pause_count, 0.9) / 1e6,
            (double)percentile(lengths, t.pause_count, 0.99) / 1e6,
            t.pause_count ? (double)lengths[t.pause_count - 1] / 1e6 : 0.0);
    char losses[256];
    report_losses(p, losses, sizeof losses);
    if (losses[0])
        fprintf(out, "# lost: %s\n", losses);
    if (p->rec->status != REC_COMPLETE)
        fprintf(out, "# recording %s: %s\n", rec_status_name(p->rec->status), p->rec->problem);
    fprintf(out, "%7s %10s %4s %-10s %-17s %-7s %9s %9s %8s %8s %8s %8s %8s %8s\n", "number",
            "start", "gen", "kind", "reason", "compact", "pause", "time", "gen0", "gen1", "gen2",
            "loh", "poh", "promoted");
    static const char *const compact_words[] = {"no", "yes", "?"};
    for (size_t i = 0; i < t.count; i++) {
        const struct gc_row *g = &t.rows[i];
        char sizes[GC_SPACES][16], promoted[16], start[24], pause[24], time[24];
        for (int k = 0; k < GC_SPACES; k++)
            size_text(g->size[k], sizes[k], sizeof sizes[k]);
        size_text(g->promoted, promoted, sizeof promoted);
        snprintf(start, sizeof start, "%.4fs", (double)g->start / 1e9);
        snprintf(pause, sizeof pause, "%.2fms", (double)g->pause / 1e6);
        snprintf(time, sizeof time, "%.2fms", (double)g->duration / 1e6);
        fprintf(out, "%7llu %10s %4llu %-10s %-17s %-7s %9s %9s %8s %8s %8s %8s %8s %8s\n",
                (unsigned long long)g->number, start, (unsigned long long)g->generation,
                gc_kind_name(g->kind), gc_reason_name(g->reason),
                compact_words[g->compacting < 3 ? g->compacting : 2], pause, time, sizes[GC_GEN0],
                sizes[GC_GEN1], sizes[GC_GEN2], sizes[GC_LOH], sizes[GC_POH], promoted);
    }
    mem_free(lengths);
    gc_table_free(&t);
    return 0;
}
