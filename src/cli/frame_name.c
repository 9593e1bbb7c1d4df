/*
 * frame_name: see frame_name.h.
 */
#include "cli/frame_name.h"

#include <stdio.h>
#include <string.h>

#include "cli/fold.h"

static struct rec_str str(const struct recording *r, uint32_t id)
{
    return r->strings[id];
}

size_t frame_name_format(const struct recording *r, uint32_t id, char *out, size_t size)
{
    int n;
    if (id == 0 || id >= r->frame_count) {
        n = snprintf(out, size, "[invalid frame]");
        return n < 0 ? 0 : (size_t)n;
    }
    const struct rec_frame *f = &r->frames[id];
    struct rec_str type = str(r, f->type), name = str(r, f->name);
    struct rec_str module = rec_str_basename(str(r, f->module));
    switch (f->kind) {
    case FMT_FRAME_MANAGED:
        if (type.len)
            n = snprintf(out, size, "%.*s.%.*s", (int)type.len, type.p, (int)name.len, name.p);
        else
            n = snprintf(out, size, "%.*s", (int)name.len, name.p);
        if (n >= 0 && f->extra) {
            size_t used = (size_t)n < size ? (size_t)n : (size > 0 ? size - 1 : 0);
            int m = snprintf(out + used, size - used, "``%llu", (unsigned long long)f->extra);
            n = m < 0 ? n : n + m;
        }
        break;
    case FMT_FRAME_NATIVE:
    case FMT_FRAME_RUNTIME:
        if (name.len)
            n = snprintf(out, size, "%.*s!%.*s", (int)module.len, module.p, (int)name.len, name.p);
        else if (f->extra == FOLD_RUN_EXTRA) /* a run of such frames, folded */
            n = snprintf(out, size, "%.*s", (int)module.len, module.p);
        else
            n = snprintf(out, size, "%.*s!+0x%llx", (int)module.len, module.p,
                         (unsigned long long)f->extra);
        break;
    case FMT_FRAME_LABEL: {
        /* [label], [label] subject, or [label] the subject frame's name;
         * the subject was defined before this frame, so this recursion
         * always ends */
        char subject[768] = "";
        if (f->extra && f->extra < id)
            frame_name_format(r, (uint32_t)f->extra, subject, sizeof subject);
        else if (type.len)
            snprintf(subject, sizeof subject, "%.*s", (int)type.len, type.p);
        n = snprintf(out, size, "[%.*s]%s%s", (int)name.len, name.p, subject[0] ? " " : "",
                     subject);
        break;
    }
    default:
        n = snprintf(out, size, "%.*s", (int)name.len, name.p);
        break;
    }
    return n < 0 ? 0 : (size_t)n;
}
