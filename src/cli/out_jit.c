/*
 * out_jit: `report -f jit`: compiling and loading in a recording made with
 * -e jit: how many methods were compiled and how long it took (in all, and
 * as a share of the run's wall time: compiles on several threads add up),
 * by tier, the slowest compiles, compiles per second over the run, methods
 * whose ReadyToRun code was used instead, classes loaded, and the loads of
 * assemblies and modules with their times.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/event_table.h"
#include "common/mem.h"

/* Tiers as the agent records them (src/agent/sources/jit.c). */
static const char *const tier_names[] = {
    "unknown", "unknown", "minopts", "optimized", "tier0", "tier1", "OSR",
    "tier0 instrumented", "tier1 instrumented",
};
#define TIERS (sizeof tier_names / sizeof tier_names[0])

static const char *tier_name(uint64_t tier)
{
    return tier < TIERS ? tier_names[tier] : "unknown";
}

struct compile {
    uint64_t ns;
    uint64_t time;
    uint64_t method;
    uint64_t tier;
    uint64_t r2r;
};

static int slower(const void *a, const void *b)
{
    const struct compile *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns < y->ns ? 1 : -1;
    return x->time < y->time ? -1 : x->time > y->time;
}

static void print_loads(struct event_table *e, FILE *out)
{
    struct event_table loads;
    if (event_table_open(&loads, e->p, e->o, FMT_EV_LOADS) < 0 || loads.event < 0) {
        event_table_close(&loads);
        return;
    }
    struct event_table_rows rows;
    event_table_rows_init(&rows);
    uint64_t count[3] = {0}, ns[3] = {0};
    size_t i = 0;
    for (const struct rec_record *x = event_table_next(&loads, NULL); x;
         x = event_table_next(&loads, x), i++) {
        uint64_t kind = event_table_get(&loads, x, FMT_LOADS_KIND);
        uint64_t t = event_table_value(&loads, x, FMT_LOADS_LOAD);
        if (kind > 2)
            kind = 0;
        count[kind]++;
        ns[kind] += t;
        struct event_table_row *r = event_table_row(&rows, i);
        if (r) {
            r->sum = t;
            r->a = kind;
            r->b = event_table_get(&loads, x, FMT_LOADS_NAME);
        }
    }
    char a[32], m[32];
    event_table_duration_text(ns[1], a, sizeof a);
    event_table_duration_text(ns[2], m, sizeof m);
    fprintf(out, "\nloads: %llu assemblies in %s, %llu modules in %s (timed on the loading "
                 "thread; a module's load is part of its assembly's)\n",
            (unsigned long long)count[1], a, (unsigned long long)count[2], m);
    event_table_rows_sort(&rows, 1);
    fprintf(out, "%12s  %-8s  %s\n", "time", "kind", "name");
    for (size_t k = 0; k < event_table_limit(e, rows.count) && k < 20; k++) {
        const struct event_table_row *r = &rows.rows[k];
        char t[32], name[512];
        event_table_duration_text(r->sum, t, sizeof t);
        fprintf(out, "%12s  %-8s  %s\n", t, r->a == 1 ? "assembly" : r->a == 2 ? "module" : "?",
                event_table_string(&loads, r->b, name, sizeof name));
    }
    event_table_rows_free(&rows);
    event_table_close(&loads);
}

/* The counts the agent records now and then (classes, R2R methods). */
static void counts(struct event_table *e, uint64_t *classes, uint64_t *r2r)
{
    struct event_table c;
    *classes = *r2r = 0;
    if (event_table_open(&c, e->p, NULL, FMT_EV_JIT_COUNTS) < 0 || c.event < 0) {
        event_table_close(&c);
        return;
    }
    for (const struct rec_record *x = event_table_next(&c, NULL); x; x = event_table_next(&c, x)) {
        *classes += event_table_value(&c, x, FMT_JIT_COUNTS_CLASSES);
        *r2r += event_table_value(&c, x, FMT_JIT_COUNTS_R2R_METHODS);
    }
    event_table_close(&c);
}

int report_jit(const struct profile *p, const struct report_options *o, FILE *out)
{
    struct event_table e;
    if (event_table_open(&e, p, o, FMT_EV_JIT) < 0) {
        cli_error("out of memory while writing the jit table");
        return -1;
    }
    if (e.event < 0) {
        fputs("# no compilations in this recording (record with -e jit)\n", out);
        event_table_close(&e);
        return 0;
    }
    struct compile *all = NULL;
    size_t n = 0, cap = 0;
    uint64_t total = 0, tier_count[TIERS] = {0}, tier_ns[TIERS] = {0}, replaced_r2r = 0;
    uint64_t span = event_table_duration(p->rec);
    /* a day of seconds at most: a longer run's later compiles go in the last */
    size_t seconds = span / 1000000000ull < 86400 ? (size_t)(span / 1000000000ull) + 1 : 86400;
    uint64_t *per_second = mem_calloc(seconds, sizeof *per_second);
    uint64_t *ns_second = mem_calloc(seconds, sizeof *ns_second);
    int rc = 0;
    if (!per_second || !ns_second)
        goto oom;
    for (const struct rec_record *x = event_table_next(&e, NULL); x; x = event_table_next(&e, x)) {
        struct compile c = {event_table_value(&e, x, FMT_JIT_COMPILE), x->time,
                            event_table_get(&e, x, FMT_JIT_METHOD),
                            event_table_get(&e, x, FMT_JIT_TIER),
                            event_table_get(&e, x, FMT_JIT_HAD_R2R)};
        struct compile *grown = mem_grow(all, &cap, n + 1, sizeof *grown);
        if (!grown)
            goto oom;
        all = grown;
        all[n++] = c;
        total += c.ns;
        uint64_t t = c.tier < TIERS ? c.tier : 0;
        tier_count[t]++;
        tier_ns[t] += c.ns;
        replaced_r2r += c.r2r != 0;
        size_t s = x->time / 1000000000ull < seconds ? (size_t)(x->time / 1000000000ull)
                                                     : seconds - 1;
        per_second[s]++;
        ns_second[s] += c.ns;
    }
    uint64_t classes, r2r;
    counts(&e, &classes, &r2r);
    char t_total[32], t_span[32];
    event_table_duration_text(total, t_total, sizeof t_total);
    event_table_duration_text(span, t_span, sizeof t_span);
    fprintf(out, "# JIT: %zu compiles, %s compiling (%.1f%% of the %s run's wall time, all "
                 "threads together)\n",
            n, t_total, span ? 100.0 * (double)total / (double)span : 0.0, t_span);
    fprintf(out, "#   ReadyToRun code used for %llu methods (not compiled); %llu classes loaded\n",
            (unsigned long long)r2r, (unsigned long long)classes);
    if (replaced_r2r)
        fprintf(out, "#   %llu compiles replaced ReadyToRun code (hot methods tiered up)\n",
                (unsigned long long)replaced_r2r);

    fprintf(out, "\nby tier\n%10s %12s %12s  %s\n", "compiles", "time", "average", "tier");
    for (size_t t = 0; t < TIERS; t++) {
        if (!tier_count[t])
            continue;
        char a[32], b[32];
        event_table_duration_text(tier_ns[t], a, sizeof a);
        event_table_duration_text(tier_ns[t] / tier_count[t], b, sizeof b);
        fprintf(out, "%10llu %12s %12s  %s\n", (unsigned long long)tier_count[t], a, b,
                tier_name(t));
    }
    if (n)
        qsort(all, n, sizeof *all, slower);
    fprintf(out, "\nslowest compiles\n%12s %10s  %-18s  %s\n", "time", "at", "tier", "method");
    for (size_t i = 0; i < event_table_limit(&e, n); i++) {
        char a[32], at[32];
        event_table_duration_text(all[i].ns, a, sizeof a);
        snprintf(at, sizeof at, "%.3f s", (double)all[i].time / 1e9);
        fprintf(out, "%12s %10s  %-18s  %s%s\n", a, at, tier_name(all[i].tier),
                event_table_frame_name(&e, all[i].method), all[i].r2r ? " (had R2R code)" : "");
    }
    fprintf(out, "\ncompiles per second\n%10s %10s %12s\n", "second", "compiles", "time");
    for (size_t s = 0; s < seconds; s++) {
        if (!per_second[s])
            continue;
        char a[32];
        event_table_duration_text(ns_second[s], a, sizeof a);
        fprintf(out, "%10zu %10llu %12s\n", s, (unsigned long long)per_second[s], a);
    }
    print_loads(&e, out);
    goto out;
oom:
    cli_error("out of memory while writing the jit table");
    rc = -1;
out:
    mem_free(all);
    mem_free(per_second);
    mem_free(ns_second);
    event_table_close(&e);
    return rc;
}
