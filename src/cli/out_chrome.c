/*
 * out_chrome: Chrome trace event JSON, which Perfetto and chrome://tracing
 * open: one track per thread (named by thread_name metadata events), and
 * the thread's samples in time order turned into nested complete ("X")
 * slices: a frame stays open while consecutive samples keep it on their
 * stack, so a method that ran for 40 ms is one 40 ms slice with its callees
 * under it.  A sample stands for the interval before its timestamp (its
 * weight times the event's period); a gap of more than two intervals
 * between samples closes every slice.  A frame on one sample only is no
 * slice: every sample is in the trace's "samples" (its thread, time,
 * weight and stack), the stacks in "stackFrames" (the call tree's nodes:
 * name, category and parent), as the Trace Event Format defines them, so
 * that a million random stacks stay a file a viewer loads (the slices of
 * every stack change of such a recording took 2.9 GB) and counts stay
 * exact.  Times are microseconds from the start of the recording.  An event that is not time (alloc, live: bytes)
 * is drawn as instants on its threads' tracks, each named by its leaf frame
 * ("[alloc] System.Byte[]") with its value.  A recording of -e gc adds two
 * tracks: the pauses (each suspension of the program for a collection) and
 * the collections themselves (a background one runs beside the program).
 */
#include <string.h>

#include "cli/cli.h"
#include "cli/gc_table.h"
#include "cli/json.h"
#include "cli/report.h"
#include "cli/timeline.h"
#include "common/mem.h"

struct open_frame {
    uint32_t name;
    uint32_t samples; /* on how many consecutive samples */
    double start;     /* us */
};

static const char *frame_category(const struct profile *p, uint32_t name)
{
    return p->name_kind[name] == FMT_FRAME_MANAGED   ? "managed"
           : p->name_kind[name] == FMT_FRAME_RUNTIME ? "runtime"
                                                     : "native";
}

static void slice(FILE *out, const struct profile *p, uint32_t tid, const struct open_frame *f,
                  double end, int *first)
{
    if (f->samples < 2)
        return;
    fputs(*first ? "\n{\"ph\":\"X\",\"name\":" : ",\n{\"ph\":\"X\",\"name\":", out);
    *first = 0;
    json_string(out, prof_name(p, f->name));
    fprintf(out, ",\"pid\":1,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"cat\":\"%s\"}", tid, f->start,
            end - f->start > 0 ? end - f->start : 0.001, frame_category(p, f->name));
}

/* Track ids of the GC tracks: above any thread id. */
#define GC_PAUSE_TID 4000000001u
#define GC_COLLECTION_TID 4000000002u

static void gc_tracks(FILE *out, const struct recording *r)
{
    struct gc_table t;
    if (gc_table_load(r, 0, 0, &t) <= 0)
        return;
    fprintf(out, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":%u,\"args\":"
                 "{\"name\":\"GC pauses\"}}",
            GC_PAUSE_TID);
    fprintf(out, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":%u,\"args\":"
                 "{\"name\":\"GC collections\"}}",
            GC_COLLECTION_TID);
    for (size_t i = 0; i < t.pause_count; i++) {
        const struct gc_pause *pa = &t.pauses[i];
        char name[96];
        const struct gc_row *row = NULL;
        for (size_t k = 0; k < t.count && !row; k++)
            if (t.rows[k].number == pa->gc)
                row = &t.rows[k];
        if (row)
            snprintf(name, sizeof name, "pause: GC %llu gen%llu %s", (unsigned long long)row->number,
                     (unsigned long long)row->generation, gc_reason_name(row->reason));
        else
            snprintf(name, sizeof name, "pause (%s)", gc_suspend_reason_name(pa->reason));
        fprintf(out, ",\n{\"ph\":\"X\",\"name\":\"%s\",\"pid\":1,\"tid\":%u,\"ts\":%.3f,"
                     "\"dur\":%.3f,\"cat\":\"gc\"}",
                name, GC_PAUSE_TID, (double)pa->start / 1e3, (double)pa->duration / 1e3);
    }
    for (size_t i = 0; i < t.count; i++) {
        const struct gc_row *g = &t.rows[i];
        fprintf(out, ",\n{\"ph\":\"X\",\"name\":\"GC %llu gen%llu %s %s\",\"pid\":1,\"tid\":%u,"
                     "\"ts\":%.3f,\"dur\":%.3f,\"cat\":\"gc\",\"args\":{\"pause_ms\":%.3f,"
                     "\"gen0\":%llu,\"gen1\":%llu,\"gen2\":%llu,\"loh\":%llu,\"poh\":%llu}}",
                (unsigned long long)g->number, (unsigned long long)g->generation,
                gc_kind_name(g->kind), gc_reason_name(g->reason), GC_COLLECTION_TID,
                (double)g->start / 1e3, (double)g->duration / 1e3, (double)g->pause / 1e6,
                (unsigned long long)g->size[GC_GEN0], (unsigned long long)g->size[GC_GEN1],
                (unsigned long long)g->size[GC_GEN2], (unsigned long long)g->size[GC_LOH],
                (unsigned long long)g->size[GC_POH]);
    }
    gc_table_free(&t);
}

/* Calls fn for each sample of the timeline, thread by thread in time
 * order, with the thread's os tid. */
typedef void each_fn(FILE *out, const struct profile *p, uint32_t tid, const struct prof_sample *ps,
                     const struct rec_sample *s, int *first);
static void each_sample(FILE *out, const struct profile *p, const struct timeline *t, each_fn *fn,
                        int *first)
{
    for (size_t k = 0; k < t->thread_count; k++) {
        const struct timeline_thread *th = &t->threads[k];
        uint32_t tid = (uint32_t)p->rec->threads[th->thread].os_tid;
        for (size_t i = 0; i < th->count; i++) {
            const struct prof_sample *ps = &t->order[th->first + i];
            fn(out, p, tid, ps, &p->rec->samples[ps->sample], first);
        }
    }
}

/* An event that is not time: one instant per sample, named by its leaf. */
static void instant(FILE *out, const struct profile *p, uint32_t tid, const struct prof_sample *ps,
                    const struct rec_sample *s, int *first)
{
    (void)first;
    fputs(",\n{\"ph\":\"i\",\"s\":\"t\",\"name\":", out);
    json_string(out, prof_name(p, p->nodes[p->path_leaf[ps->path]].name));
    fprintf(out, ",\"pid\":1,\"tid\":%u,\"ts\":%.3f,\"cat\":", tid, (double)s->time / 1e3);
    json_string(out, prof_event_name(p));
    fprintf(out, ",\"args\":{\"%s\":%.0f}}", prof_unit(p), prof_value(p, s->weight));
}

/* One entry of "samples": thread, time, weight (in the event's periods, as
 * collapsed stacks count) and its leaf node in "stackFrames". */
static void sample(FILE *out, const struct profile *p, uint32_t tid, const struct prof_sample *ps,
                   const struct rec_sample *s, int *first)
{
    fprintf(out, "%s{\"name\":", *first ? "\n" : ",\n");
    *first = 0;
    json_string(out, prof_event_name(p));
    fprintf(out, ",\"pid\":1,\"tid\":%u,\"ts\":%.3f,\"sf\":\"%u\",\"weight\":%llu}", tid,
            (double)s->time / 1e3, p->path_leaf[ps->path], (unsigned long long)s->weight);
}

/* "stackFrames": every node of the call tree by its number, with its
 * parent's; "samples": every sample. */
static void stacks_and_samples(FILE *out, const struct profile *p, const struct timeline *t)
{
    fputs("],\n\"stackFrames\":{", out);
    for (size_t i = 1; i < p->node_count; i++) {
        fprintf(out, i > 1 ? ",\n\"%zu\":{\"name\":" : "\n\"%zu\":{\"name\":", i);
        json_string(out, prof_name(p, p->nodes[i].name));
        fprintf(out, ",\"category\":\"%s\"", frame_category(p, p->nodes[i].name));
        if (p->nodes[i].parent)
            fprintf(out, ",\"parent\":\"%u\"", p->nodes[i].parent);
        fputc('}', out);
    }
    fputs("},\n\"samples\":[", out);
    int first = 1;
    each_sample(out, p, t, sample, &first);
}

int report_chrome(const struct profile *p, const struct report_options *o, FILE *out)
{
    (void)o;
    struct timeline t;
    if (timeline_build(p, &t) < 0) {
        cli_error("out of memory while writing the chrome trace");
        return -1;
    }
    uint32_t *names = NULL;
    size_t names_cap = 0, stack_cap = 0, open_count = 0;
    struct open_frame *stack = NULL;
    int rc = 0, first = 1;
    char title[512];
    report_title(p, title, sizeof title);
    fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":", out);
    json_string(out, "corscope " CORSCOPE_VERSION);
    fputs(",\"title\":", out);
    json_string(out, title);
    fputs("},\"traceEvents\":[", out);
    fputs("\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":", out);
    json_string(out, title);
    fputs("}}", out);
    first = 0;
    int timed = strcmp(prof_unit(p), "ns") == 0;
    for (size_t k = 0; k < t.thread_count && rc == 0; k++) {
        const struct timeline_thread *th = &t.threads[k];
        uint32_t tid = (uint32_t)p->rec->threads[th->thread].os_tid;
        char name[160];
        timeline_thread_name(p, th->thread, name, sizeof name);
        fprintf(out, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":%u,\"args\":{\"name\":", tid);
        json_string(out, name);
        fputs("}}", out);
        if (!timed)
            continue;
        open_count = 0;
        double last_end = 0;
        for (size_t i = 0; i < th->count; i++) {
            const struct prof_sample *ps = &t.order[th->first + i];
            const struct rec_sample *s = &p->rec->samples[ps->sample];
            double end = (double)s->time / 1e3;
            double len = prof_value(p, s->weight) / 1e3;
            double start = end - len;
            if (start < last_end)
                start = last_end;
            size_t depth = prof_node_path(p, p->path_leaf[ps->path], &names, &names_cap);
            struct open_frame *grown = mem_grow(stack, &stack_cap, depth + 1, sizeof *stack);
            if (depth == SIZE_MAX || !grown) {
                rc = -1;
                break;
            }
            stack = grown;
            size_t keep = 0;
            if (start - last_end <= 2 * len) /* contiguous: frames may stay open */
                while (keep < open_count && keep < depth && stack[keep].name == names[keep])
                    stack[keep++].samples++;
            else
                start = end - len;
            while (open_count > keep)
                slice(out, p, tid, &stack[--open_count], last_end, &first);
            for (size_t d = keep; d < depth; d++) {
                stack[d].name = names[d];
                stack[d].samples = 1;
                stack[d].start = start;
            }
            open_count = depth;
            last_end = end;
        }
        while (open_count > 0)
            slice(out, p, tid, &stack[--open_count], last_end, &first);
    }
    if (!timed)
        each_sample(out, p, &t, instant, &first);
    gc_tracks(out, p->rec);
    /* the runtime's events, on tracks of their own */
    if (rc == 0 && chrome_runtime_events(p, out, &first) < 0)
        rc = -1;
    stacks_and_samples(out, p, &t);
    fputs("\n]}\n", out);
    mem_free(names);
    mem_free(stack);
    timeline_free(&t);
    if (rc < 0)
        cli_error("out of memory while writing the chrome trace");
    return rc;
}
