/*
 * out_top: the flat table: for every method, its self share (samples where
 * it is the leaf) and total share (samples where it is anywhere on the
 * stack, counted once per sample however deep the recursion), sorted by
 * self then total.  Headed by what the profile covers and what was lost.
 * An event with a count beside its value (alloc: bytes and objects) gets
 * the count's columns too.
 *
 * The runtime's own work is named by what it did.  A sample that ends in
 * the runtime (below the innermost managed frame, nothing but native code
 * and the agent's labels) belongs, as self, to the innermost label on that
 * way ("[JIT] App.Parse", "[GC gen0 other]", "[load type] T", a runtime
 * thread's "[.NET BGC]"), not to the library it stopped in: a
 * libcoreclr.so or libclrjit.so row keeps only what no label explains.
 * One line above the table sums the runtime's share by label.
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

/* The runtime's share by what it did, for the line above the table: per
 * label word ("[JIT]", "[load type]"), found once per name (word_of). */
enum { WORDS = 64, WORD_OTHER = WORDS + 1 };
struct word {
    uint32_t name; /* a name with this word */
    uint64_t weight;
};
struct runtime_work {
    uint64_t all;        /* weight of samples that ended in the runtime */
    uint64_t unnamed;    /* of those, with no label on the way */
    uint8_t *word_of;    /* name id -> word index + 1, WORD_OTHER, 0 unknown */
    struct word words[WORDS];
    size_t word_count;
    uint64_t other_words; /* beyond WORDS */
};

/* Does a label frame say what the runtime was doing?  The fold's roots
 * ([start], [thread]) do not. */
static int explains(const struct profile *p, uint32_t name)
{
    const char *s = prof_name(p, name);
    return p->name_kind[name] == FMT_FRAME_LABEL && strcmp(s, "[start]") && strcmp(s, "[thread]");
}

/* The frame (index, leaf first) a path's self belongs to: the leaf, or the
 * innermost label between the leaf and the innermost managed frame;
 * *in_runtime says whether the sample ended in the runtime (a runtime
 * frame or a label on that way). */
static uint32_t self_frame(const struct profile *p, struct rec_stack s, uint8_t *memo,
                           int *in_runtime)
{
    const struct recording *r = p->rec;
    *in_runtime = 0;
    for (uint32_t k = 0; k < s.depth; k++) {
        uint32_t frame = r->stack_frames[s.offset + k];
        uint8_t kind = r->frames[frame].kind;
        if (kind == FMT_FRAME_MANAGED)
            return 0;
        uint32_t name = p->frame_name[frame];
        if (kind == FMT_FRAME_RUNTIME)
            *in_runtime = 1;
        /* a label as the leaf is what an event was ("[alloc] T"): the
         * event's own row, wherever it happened */
        if (kind == FMT_FRAME_LABEL && k == 0)
            return 0;
        if (kind == FMT_FRAME_LABEL) {
            if (!memo[name])
                memo[name] = explains(p, name) ? 2 : 1;
            if (memo[name] == 2) {
                *in_runtime = 1;
                return k;
            }
        }
    }
    return 0;
}

/* "[JIT] App.Parse" -> the length of "[JIT]" */
static size_t label_word(const char *name)
{
    const char *end = strchr(name, ']');
    return end ? (size_t)(end - name) + 1 : strlen(name);
}

static void count_work(struct runtime_work *w, const struct profile *p, uint32_t name,
                       uint64_t weight, int labelled)
{
    w->all += weight;
    if (!labelled) {
        w->unnamed += weight;
        return;
    }
    if (!w->word_of[name]) {
        const char *s = prof_name(p, name);
        size_t len = label_word(s);
        w->word_of[name] = WORD_OTHER;
        for (size_t i = 0; i < w->word_count; i++) {
            const char *t = prof_name(p, w->words[i].name);
            if (label_word(t) == len && !memcmp(s, t, len))
                w->word_of[name] = (uint8_t)(i + 1);
        }
        if (w->word_of[name] == WORD_OTHER && w->word_count < WORDS) {
            w->words[w->word_count].name = name;
            w->words[w->word_count].weight = 0;
            w->word_of[name] = (uint8_t)++w->word_count;
        }
    }
    if (w->word_of[name] == WORD_OTHER)
        w->other_words += weight;
    else
        w->words[w->word_of[name] - 1].weight += weight;
}

static int by_weight(const void *a, const void *b)
{
    const struct word *x = a, *y = b;
    return x->weight < y->weight ? 1 : x->weight > y->weight ? -1 : 0;
}

/* "# the runtime's own work: 41.30% of cpu, by what it did: [JIT] 20.10%,
 * [GC gen0 other] 5.20% ...; no label 5.00%" */
static void print_work(FILE *out, const struct profile *p, struct runtime_work *w)
{
    double all = p->total_weight ? (double)p->total_weight : 1;
    if (!w->all)
        return;
    qsort(w->words, w->word_count, sizeof w->words[0], by_weight);
    fprintf(out, "# the runtime's own work: %.2f%% of %s, by what it did:",
            100.0 * (double)w->all / all, prof_event_name(p));
    size_t shown = 0;
    uint64_t rest = w->other_words;
    for (size_t i = 0; i < w->word_count; i++) {
        if (shown == 8) {
            rest += w->words[i].weight;
            continue;
        }
        const char *s = prof_name(p, w->words[i].name);
        fprintf(out, "%s %.*s %.2f%%", shown ? "," : "", (int)label_word(s), s,
                100.0 * (double)w->words[i].weight / all);
        shown++;
    }
    if (rest)
        fprintf(out, "%s other labels %.2f%%", shown ? "," : "", 100.0 * (double)rest / all);
    if (w->unnamed)
        fprintf(out, "%s no label %.2f%%", shown || rest ? ";" : "",
                100.0 * (double)w->unnamed / all);
    fputc('\n', out);
}

int report_top(const struct profile *p, const struct report_options *o, FILE *out)
{
    const struct recording *r = p->rec;
    size_t names = p->names->count;
    struct row *rows = mem_calloc(names, sizeof *rows);
    size_t *stamp = mem_calloc(names, sizeof *stamp); /* path index + 1 that last counted it */
    uint8_t *memo = mem_calloc(names ? names : 1, 1); /* does a label explain: 0 unknown, 1 no, 2 yes */
    struct runtime_work work;
    memset(&work, 0, sizeof work);
    work.word_of = mem_calloc(names ? names : 1, 1);
    if (!rows || !stamp || !memo || !work.word_of) {
        mem_free(rows);
        mem_free(stamp);
        mem_free(memo);
        mem_free(work.word_of);
        cli_error("out of memory while writing the top table");
        return -1;
    }
    for (size_t i = 0; i < names; i++)
        rows[i].name = (uint32_t)i;
    for (size_t i = 0; i < p->path_count; i++) {
        const struct prof_path *path = &p->paths[i];
        struct rec_stack s = r->stacks[path->stack];
        int in_runtime;
        uint32_t self = s.depth ? self_frame(p, s, memo, &in_runtime) : 0;
        if (s.depth && in_runtime)
            count_work(&work, p, p->frame_name[r->stack_frames[s.offset + self]], path->weight,
                       r->frames[r->stack_frames[s.offset + self]].kind == FMT_FRAME_LABEL);
        for (uint32_t k = 0; k < s.depth; k++) {
            uint32_t name = p->frame_name[r->stack_frames[s.offset + k]];
            if (k == self) {
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
    if (report_runtime_change(p->rec))
        fprintf(out, "# %s\n", report_runtime_change(p->rec));
    print_work(out, p, &work);
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
    mem_free(memo);
    mem_free(work.word_of);
    return 0;
}
