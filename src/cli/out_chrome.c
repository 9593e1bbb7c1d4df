/*
 * out_chrome: Chrome trace event JSON, which Perfetto and chrome://tracing
 * open: one track per thread (named by thread_name metadata events), and
 * the thread's samples in time order turned into nested complete ("X")
 * slices: a frame stays open while consecutive samples keep it on their
 * stack, so a method that ran for 40 ms is one 40 ms slice with its callees
 * under it.  A sample stands for the interval before its timestamp (its
 * weight times the event's period); a gap of more than two intervals
 * between samples closes every slice.  Times are microseconds from the
 * start of the recording.
 */
#include <string.h>

#include "cli/cli.h"
#include "cli/json.h"
#include "cli/report.h"
#include "cli/timeline.h"
#include "common/mem.h"

struct open_frame {
    uint32_t name;
    double start; /* us */
};

static void slice(FILE *out, const struct profile *p, uint32_t tid, const struct open_frame *f,
                  double end, int *first)
{
    fputs(*first ? "\n{\"ph\":\"X\",\"name\":" : ",\n{\"ph\":\"X\",\"name\":", out);
    *first = 0;
    json_string(out, prof_name(p, f->name));
    fprintf(out, ",\"pid\":1,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"cat\":\"%s\"}", tid, f->start,
            end - f->start > 0 ? end - f->start : 0.001,
            p->name_kind[f->name] == FMT_FRAME_MANAGED ? "managed" : p->name_kind[f->name] == FMT_FRAME_RUNTIME ? "runtime" : "native");
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
    for (size_t k = 0; k < t.thread_count && rc == 0; k++) {
        const struct timeline_thread *th = &t.threads[k];
        uint32_t tid = (uint32_t)p->rec->threads[th->thread].os_tid;
        char name[160];
        timeline_thread_name(p, th->thread, name, sizeof name);
        fprintf(out, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":%u,\"args\":{\"name\":", tid);
        json_string(out, name);
        fputs("}}", out);
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
                    keep++;
            else
                start = end - len;
            while (open_count > keep)
                slice(out, p, tid, &stack[--open_count], last_end, &first);
            for (size_t d = keep; d < depth; d++) {
                stack[d].name = names[d];
                stack[d].start = start;
            }
            open_count = depth;
            last_end = end;
        }
        while (open_count > 0)
            slice(out, p, tid, &stack[--open_count], last_end, &first);
    }
    /* the runtime's events, on tracks of their own */
    if (rc == 0 && chrome_runtime_events(p, out, &first) < 0)
        rc = -1;
    fputs("\n]}\n", out);
    mem_free(names);
    mem_free(stack);
    timeline_free(&t);
    if (rc < 0)
        cli_error("out of memory while writing the chrome trace");
    return rc;
}
