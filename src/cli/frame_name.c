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

/* Past a state machine's name after its `>d`: the optional __N (its
 * ordinal) and `N (its generic arity); k is where they would begin. */
static size_t state_machine_suffix(const char *s, size_t len, size_t k)
{
    if (k + 1 < len && s[k] == '_' && s[k + 1] == '_') {
        k += 2;
        while (k < len && s[k] >= '0' && s[k] <= '9')
            k++;
    }
    if (k < len && s[k] == '`') {
        k++;
        while (k < len && s[k] >= '0' && s[k] <= '9')
            k++;
    }
    return k;
}

int frame_name_state_machine(const char *type, size_t type_len, const char *method,
                        size_t method_len, size_t *outer_len, const char **name, size_t *name_len)
{
    if (method_len != 8 || memcmp(method, "MoveNext", 8))
        return 0;
    /* the innermost nested type: after the last '+' */
    size_t plus = type_len;
    while (plus > 0 && type[plus - 1] != '+')
        plus--;
    if (plus < 2)
        return 0;
    const char *sm = type + plus;
    size_t sm_len = type_len - plus;
    /* <Name>d, <Name>d__N, each perhaps with a generic arity `N */
    if (sm_len < 4 || sm[0] != '<')
        return 0;
    size_t close = sm_len;
    while (close > 1 && sm[close - 1] != '>')
        close--;
    if (close < 3 || close >= sm_len || sm[close] != 'd')
        return 0;
    if (state_machine_suffix(sm, sm_len, close + 1) != sm_len)
        return 0;
    *outer_len = plus - 1;
    *name = sm + 1;
    *name_len = close - 2;
    return 1;
}

/* A type name as text (a label's subject) with each nested state machine
 * named as written: `Outer+<Name>d__N` becomes `Outer.Name`, inside
 * generic arguments too (`AsyncStateMachineBox`1[VoidTaskResult,
 * App.Chain+<C>d__2]`, the box a [load type] label names).  Into out,
 * NUL-terminated, cut to size. */
static void name_state_machines(const char *in, size_t len, char *out, size_t size)
{
    size_t n = 0;
    for (size_t i = 0; i < len && n + 1 < size;) {
        if (in[i] == '+' && i + 1 < len && in[i + 1] == '<') {
            size_t close = i + 2;
            while (close < len && in[close] != '>' && in[close] != '<' && in[close] != ',' &&
                   in[close] != '[' && in[close] != ']')
                close++;
            size_t k = close + 1;
            if (close < len && in[close] == '>' && close > i + 2 && k < len && in[k] == 'd') {
                k = state_machine_suffix(in, len, k + 1);
                if (k == len || in[k] == ',' || in[k] == ']' || in[k] == '+' || in[k] == '[') {
                    out[n++] = '.';
                    for (size_t c = i + 2; c < close && n + 1 < size; c++)
                        out[n++] = in[c];
                    i = k;
                    continue;
                }
            }
        }
        out[n++] = in[i++];
    }
    if (size)
        out[n < size ? n : size - 1] = '\0';
}

/* Was the recording made for async code (logical stacks, or snapshots of
 * pending operations)? */
static int async_names(const struct recording *r)
{
    const struct rec_str *v = rec_info(r, FMT_INFO_ASYNC);
    return v && v->len >= 2 && memcmp(v->p, "of", 2) != 0;
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
    case FMT_FRAME_MANAGED: {
        size_t outer;
        const char *written;
        size_t written_len;
        if (async_names(r) && frame_name_state_machine(type.p, type.len, name.p, name.len, &outer,
                                                  &written, &written_len)) {
            n = snprintf(out, size, "%.*s.%.*s", (int)outer, type.p, (int)written_len, written);
            break;
        }
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
    }
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
        else if (type.len && async_names(r))
            name_state_machines(type.p, type.len, subject, sizeof subject);
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
