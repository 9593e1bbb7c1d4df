/*
 * out_speedscope: the speedscope file format
 * (https://www.speedscope.app/file-format-schema.json): the display names
 * as shared frames, and one "sampled" profile per thread whose samples are
 * in time order, so speedscope's time-ordered view replays the thread; each
 * sample weighs its event's value (nanoseconds for cpu and wall).
 */
#include <string.h>

#include "cli/cli.h"
#include "cli/json.h"
#include "cli/report.h"
#include "cli/timeline.h"
#include "common/mem.h"

int report_speedscope(const struct profile *p, const struct report_options *o, FILE *out)
{
    (void)o;
    struct timeline t;
    if (timeline_build(p, &t) < 0) {
        cli_error("out of memory while writing speedscope");
        return -1;
    }
    int ns = strcmp(prof_unit(p), "ns") == 0;
    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",", out);
    fprintf(out, "\"exporter\":\"corscope %s\",\"name\":", CORSCOPE_VERSION);
    char title[512];
    report_title(p, title, sizeof title);
    json_string(out, title);
    fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", out);
    /* frame index = name id - 1 (id 0 is the empty name) */
    for (size_t i = 1; i < p->names->count; i++) {
        fputs(i > 1 ? ",{\"name\":" : "{\"name\":", out);
        json_string(out, prof_name(p, (uint32_t)i));
        fputc('}', out);
    }
    fputs("]},\"profiles\":[", out);
    uint32_t *names = NULL;
    size_t names_cap = 0;
    int rc = 0;
    for (size_t k = 0; k < t.thread_count && rc == 0; k++) {
        const struct timeline_thread *th = &t.threads[k];
        char name[160];
        timeline_thread_name(p, th->thread, name, sizeof name);
        const struct rec_sample *first = &p->rec->samples[t.order[th->first].sample];
        const struct rec_sample *last = &p->rec->samples[t.order[th->first + th->count - 1].sample];
        double end = (double)last->time + prof_value(p, last->weight);
        fputs(k ? ",{\"type\":\"sampled\",\"name\":" : "{\"type\":\"sampled\",\"name\":", out);
        json_string(out, name);
        fprintf(out, ",\"unit\":\"%s\",\"startValue\":%.0f,\"endValue\":%.0f,\"samples\":[",
                ns ? "nanoseconds" : "none", ns ? (double)first->time : 0.0,
                ns ? end : (double)th->count);
        for (size_t i = 0; i < th->count; i++) {
            const struct prof_sample *s = &t.order[th->first + i];
            size_t depth = prof_node_path(p, p->path_leaf[s->path], &names, &names_cap);
            if (depth == SIZE_MAX) {
                rc = -1;
                break;
            }
            fputs(i ? ",[" : "[", out);
            for (size_t d = 0; d < depth; d++)
                fprintf(out, d ? ",%u" : "%u", names[d] - 1);
            fputc(']', out);
        }
        fputs("],\"weights\":[", out);
        for (size_t i = 0; i < th->count; i++) {
            const struct rec_sample *s = &p->rec->samples[t.order[th->first + i].sample];
            fprintf(out, i ? ",%.0f" : "%.0f", prof_value(p, s->weight));
        }
        fputs("]}", out);
    }
    fputs("]}\n", out);
    mem_free(names);
    timeline_free(&t);
    if (rc < 0)
        cli_error("out of memory while writing speedscope");
    return rc;
}
