/*
 * out_speedscope: the speedscope file format
 * (https://www.speedscope.app/file-format-schema.json): the display names
 * as shared frames, and one "sampled" profile per (event, thread) whose
 * samples are in time order, so speedscope's time-ordered view replays the
 * thread; each sample weighs its event's value (nanoseconds for cpu and
 * wall, bytes for alloc and live).  The first profile of the current event
 * (--event) is the one speedscope opens on; its profile menu lists the rest.
 */
#include <string.h>

#include "cli/cli.h"
#include "cli/json.h"
#include "cli/report.h"
#include "cli/timeline.h"
#include "common/mem.h"

static const char *speedscope_unit(const struct profile *p)
{
    const char *unit = prof_unit(p);
    if (!strcmp(unit, "ns"))
        return "nanoseconds";
    if (!strcmp(unit, "bytes"))
        return "bytes";
    return "none";
}

/* The profiles of one view, one per thread; *count of them written so far. */
static int write_view(const struct profile *p, FILE *out, size_t *count)
{
    struct timeline t;
    if (timeline_build(p, &t) < 0)
        return -1;
    const char *unit = speedscope_unit(p);
    int ns = !strcmp(unit, "nanoseconds");
    uint32_t *names = NULL;
    size_t names_cap = 0;
    int rc = 0;
    for (size_t k = 0; k < t.thread_count && rc == 0; k++) {
        const struct timeline_thread *th = &t.threads[k];
        char thread[160], name[256];
        timeline_thread_name(p, th->thread, thread, sizeof thread);
        snprintf(name, sizeof name, "%s (%s)", thread, prof_event_name(p));
        const struct rec_sample *first = &p->rec->samples[t.order[th->first].sample];
        const struct rec_sample *last = &p->rec->samples[t.order[th->first + th->count - 1].sample];
        double total = 0;
        for (size_t i = 0; i < th->count; i++)
            total += prof_value(p, p->rec->samples[t.order[th->first + i].sample].weight);
        double end = (double)last->time + prof_value(p, last->weight);
        fputs((*count)++ ? ",{\"type\":\"sampled\",\"name\":" : "{\"type\":\"sampled\",\"name\":",
              out);
        json_string(out, name);
        fprintf(out, ",\"unit\":\"%s\",\"startValue\":%.0f,\"endValue\":%.0f,\"samples\":[", unit,
                ns ? (double)first->time : 0.0, ns ? end : total);
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
    mem_free(names);
    timeline_free(&t);
    return rc;
}

int report_speedscope(const struct profile *p, const struct report_options *o, FILE *out)
{
    (void)o;
    size_t nviews = p->view_count ? p->view_count : 1;
    const struct profile *views = p->view_count ? p->views : p;
    /* the current view's profiles first: speedscope opens on the first */
    size_t current = 0;
    for (size_t i = 0; i < nviews; i++)
        if (&views[i] == p)
            current = i;
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
    size_t count = 0;
    int rc = write_view(&views[current], out, &count);
    for (size_t i = 0; i < nviews && rc == 0; i++)
        if (i != current)
            rc = write_view(&views[i], out, &count);
    fputs("]}\n", out);
    if (rc < 0)
        cli_error("out of memory while writing speedscope");
    return rc;
}
