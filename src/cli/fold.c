/*
 * fold: see fold.h.  Each distinct (stack, root) is folded once: the root
 * depends on the stack alone (remembered per stack id), except for a thread
 * without managed frames, whose root is its name (remembered by stack and
 * name).  Folded stacks that come out equal share one id; a stack with
 * nothing to fold keeps its own.
 */
#include "cli/fold.h"

#include <string.h>

#include "common/hash.h"
#include "common/map.h"
#include "common/mem.h"

enum frame_bits {
    F_MANAGED = 1,
    F_UNNAMED = 2,      /* a native frame without a symbol: folds into a run */
    F_RUNTIME = 4,      /* the runtime proper: coreclr, clrjit, clrgc */
    F_LIBC_START = 8,   /* __libc_start_main: the main thread's root */
    F_THREAD_START = 16 /* clone, start_thread: another thread's root */
};

/* Modules of the host: the `dotnet` launcher, hostfxr, hostpolicy. */
static int is_host_module(struct rec_str base)
{
    return rec_str_eq(base, "dotnet") || rec_str_eq(base, "libhostfxr.so") ||
           rec_str_eq(base, "libhostpolicy.so");
}

static int has_prefix(struct rec_str s, const char *prefix)
{
    size_t n = strlen(prefix);
    return s.len >= n && memcmp(s.p, prefix, n) == 0;
}

static int contains(struct rec_str s, const char *what)
{
    size_t n = strlen(what);
    for (size_t i = 0; i + n <= s.len; i++)
        if (memcmp(s.p + i, what, n) == 0)
            return 1;
    return 0;
}

/* The agent's mark at the root of a walk that failed. */
static int is_failed_walk_mark(const struct recording *r, uint32_t id)
{
    const struct rec_frame *f = &r->frames[id];
    return f->kind == FMT_FRAME_SYNTHETIC && rec_str_eq(r->strings[f->name], "[unknown]");
}

static uint8_t classify(const struct recording *r, uint32_t id)
{
    const struct rec_frame *f = &r->frames[id];
    if (f->kind == FMT_FRAME_MANAGED)
        return F_MANAGED;
    if (f->kind != FMT_FRAME_NATIVE && f->kind != FMT_FRAME_RUNTIME)
        return 0;
    struct rec_str module = rec_str_basename(r->strings[f->module]);
    struct rec_str name = r->strings[f->name];
    uint8_t bits = 0;
    if (!name.len && f->extra != FOLD_RUN_EXTRA)
        bits |= F_UNNAMED;
    if (f->kind == FMT_FRAME_RUNTIME && !is_host_module(module))
        bits |= F_RUNTIME;
    if (has_prefix(module, "libc.so") || has_prefix(module, "libc-")) {
        if (rec_str_eq(name, "__libc_start_main") || rec_str_eq(name, "__libc_start_call_main"))
            bits |= F_LIBC_START;
        if (contains(name, "clone") || rec_str_eq(name, "start_thread"))
            bits |= F_THREAD_START;
    }
    return bits;
}

struct folder {
    struct recording *r;
    uint8_t *bits;            /* per original frame */
    size_t old_frames;
    struct map64 run_frame;   /* (kind << 32 | module string) -> folded frame */
    uint32_t *by_stack;       /* original stack -> folded stack, 0 unknown */
    size_t old_stacks;
    struct map64 by_key;      /* (stack << 32 | root name string) -> folded stack */
    struct map64 by_hash;     /* hash of a folded stack's frames -> its id */
    uint32_t start_label, thread_label;
    uint32_t *buf;            /* the stack being folded, leaf first */
    size_t buf_cap;
};

static uint32_t add_string(struct recording *r, const char *s)
{
    return rec_add_string(r, (struct rec_str){s, (uint32_t)strlen(s)});
}

static uint32_t add_frame(struct recording *r, uint8_t kind, uint32_t module, uint32_t name,
                          uint64_t extra)
{
    return rec_add_frame(r, (struct rec_frame){kind, module, 0, name, extra});
}

/* A label frame at the root, named by string `name` ([start], [.NET BGC]). */
static uint32_t root_label(struct folder *fd, uint32_t name)
{
    uint32_t frame;
    uint64_t key = 1ull << 63 | name;
    if (map64_get(&fd->run_frame, key, &frame))
        return frame;
    frame = add_frame(fd->r, FMT_FRAME_LABEL, 0, name, 0);
    if (frame && map64_put(&fd->run_frame, key, frame) < 0)
        return 0;
    return frame;
}

static uint32_t run_frame(struct folder *fd, uint32_t old)
{
    const struct rec_frame *f = &fd->r->frames[old];
    uint64_t key = (uint64_t)f->kind << 32 | f->module;
    uint32_t frame;
    if (map64_get(&fd->run_frame, key, &frame))
        return frame;
    frame = add_frame(fd->r, f->kind, f->module, 0, FOLD_RUN_EXTRA);
    if (frame && map64_put(&fd->run_frame, key, frame) < 0)
        return 0;
    return frame;
}

static int push(struct folder *fd, size_t *n, uint32_t frame)
{
    if (!frame || mem_grow_array((void **)&fd->buf, &fd->buf_cap, *n + 1, sizeof *fd->buf))
        return -1;
    fd->buf[(*n)++] = frame;
    return 0;
}

/* Where the root fold of a stack ends: frames [root_from, depth) become
 * one root frame, *label; root_from == depth when nothing folds. */
static uint32_t root_span(struct folder *fd, const uint32_t *frames, uint32_t depth,
                          uint32_t thread_name, uint32_t *label)
{
    const uint8_t *bits = fd->bits;
    uint32_t outer_managed = depth; /* index of the outermost managed frame */
    for (uint32_t k = depth; k > 0; k--) {
        if (bits[frames[k - 1]] & F_MANAGED) {
            outer_managed = k - 1;
            break;
        }
    }
    int main_thread = 0, other_thread = 0;
    for (uint32_t k = depth; k > 0 && k + 3 > depth; k--) {
        main_thread |= (bits[frames[k - 1]] & F_LIBC_START) != 0;
        other_thread |= (bits[frames[k - 1]] & F_THREAD_START) != 0;
    }
    if (main_thread) {
        *label = fd->start_label;
        if (outer_managed < depth)
            return outer_managed + 1;
        /* no managed frame (the runtime starting or ending): the host's
         * frames, up to the runtime's own, keeping the leaf */
        uint32_t k = depth;
        while (k > 1 && !(bits[frames[k - 1]] & F_RUNTIME))
            k--;
        return k;
    }
    if (other_thread) {
        uint32_t k = depth;
        while (k > 0 && (bits[frames[k - 1]] & F_THREAD_START))
            k--;
        if (outer_managed < depth) {
            /* the runtime's thread start up to the first managed frame; a
             * native library's thread that calls managed code keeps its
             * frames */
            for (uint32_t j = k; j > outer_managed + 1; j--)
                if (!(bits[frames[j - 1]] & F_RUNTIME))
                    return depth;
            *label = fd->thread_label;
            return outer_managed + 1;
        }
        *label = thread_name ? root_label(fd, thread_name) : fd->thread_label;
        return k == 0 ? 1 : k; /* keep at least the leaf */
    }
    return depth;
}

static uint32_t intern_stack(struct folder *fd, size_t n)
{
    struct recording *r = fd->r;
    uint64_t h = hash_bytes(fd->buf, n * sizeof *fd->buf, 0x666f6c64);
    uint32_t id;
    if (map64_get(&fd->by_hash, h, &id) && r->stacks[id].depth == n &&
        memcmp(r->stack_frames + r->stacks[id].offset, fd->buf, n * sizeof *fd->buf) == 0)
        return id;
    uint32_t *frames = rec_add_stack(r, (uint32_t)n, &id);
    if (!frames)
        return 0;
    memcpy(frames, fd->buf, n * sizeof *fd->buf);
    if (map64_put(&fd->by_hash, h, id) < 0)
        return 0;
    return id;
}

/* The folded id of `stack` on a thread named `thread_name` (string id). */
static uint32_t fold_stack(struct folder *fd, uint32_t stack, uint32_t thread_name)
{
    struct recording *r = fd->r;
    if (stack == 0 || stack >= r->stack_count)
        return stack;
    struct rec_stack s = r->stacks[stack];
    /* only a thread without managed frames is named by its thread */
    const uint32_t *frames = r->stack_frames + s.offset;
    for (uint32_t k = 0; k < s.depth && thread_name; k++)
        if (frames[k] < fd->old_frames && (fd->bits[frames[k]] & F_MANAGED))
            thread_name = 0;
    uint64_t key = (uint64_t)stack << 32 | thread_name;
    uint32_t id;
    if (!thread_name && stack < fd->old_stacks && fd->by_stack[stack])
        return fd->by_stack[stack];
    if (thread_name && map64_get(&fd->by_key, key, &id))
        return id;
    for (uint32_t k = 0; k < s.depth; k++)
        if (frames[k] >= fd->old_frames)
            return stack; /* already folded: cannot happen, never refold */
    /* a stack without managed frames carries the agent's labels at its
     * root: they go after the root this fold gives it.  A walk that ended
     * early has its mark ([unknown]) outside them: the root is looked for
     * inside, as for the same walk without labels (whose mark the root
     * fold takes in) */
    uint32_t body = s.depth, labels_end = s.depth;
    if (body > 1 && is_failed_walk_mark(r, frames[body - 1]) &&
        r->frames[frames[body - 2]].kind == FMT_FRAME_LABEL)
        body = labels_end = s.depth - 1;
    while (body > 0 && r->frames[frames[body - 1]].kind == FMT_FRAME_LABEL)
        body--;
    uint32_t label = 0;
    uint32_t root_from = root_span(fd, frames, body, thread_name, &label);
    if (root_from >= body)
        root_from = body = labels_end = s.depth; /* no root fold: labels stay where they were */
    size_t n = 0;
    for (uint32_t k = 0; k < root_from; k++) {
        uint32_t f = frames[k];
        if (fd->bits[f] & F_UNNAMED) {
            const struct rec_frame *fr = &fd->r->frames[f];
            if (k > 0) {
                const struct rec_frame *prev = &fd->r->frames[frames[k - 1]];
                if ((fd->bits[frames[k - 1]] & F_UNNAMED) && prev->module == fr->module &&
                    prev->kind == fr->kind)
                    continue; /* same run */
            }
            if (push(fd, &n, run_frame(fd, f)) < 0)
                return 0;
        } else if (push(fd, &n, f) < 0) {
            return 0;
        }
    }
    for (uint32_t k = body; k < labels_end; k++)
        if (push(fd, &n, frames[k]) < 0)
            return 0;
    if (root_from < body && push(fd, &n, label) < 0)
        return 0;
    if (n == s.depth && memcmp(fd->buf, fd->r->stack_frames + s.offset, n * sizeof *fd->buf) == 0)
        id = stack; /* nothing to fold: no copy */
    else
        id = intern_stack(fd, n);
    if (!id)
        return 0;
    if (!thread_name && stack < fd->old_stacks)
        fd->by_stack[stack] = id;
    else if (map64_put(&fd->by_key, key, id) < 0)
        return 0;
    return id;
}

/* The name a runtime's own thread goes by (".NET BGC"), as a string id;
 * 0 for any other thread. */
static uint32_t runtime_thread_name(const struct recording *r, uint32_t thread)
{
    if (thread >= r->thread_count)
        return 0;
    uint32_t name = r->threads[thread].name;
    return has_prefix(r->strings[name], ".NET ") ? name : 0;
}

int fold_recording(struct recording *r)
{
    struct folder fd;
    memset(&fd, 0, sizeof fd);
    fd.r = r;
    fd.old_frames = r->frame_count;
    map64_init(&fd.run_frame);
    map64_init(&fd.by_key);
    map64_init(&fd.by_hash);
    int rc = -1;
    fd.bits = mem_calloc(r->frame_count ? r->frame_count : 1, 1);
    fd.old_stacks = r->stack_count;
    fd.by_stack = mem_calloc(r->stack_count ? r->stack_count : 1, sizeof *fd.by_stack);
    if (!fd.bits || !fd.by_stack)
        goto out;
    for (uint32_t id = 1; id < r->frame_count; id++)
        fd.bits[id] = classify(r, id);
    uint32_t start = add_string(r, "start"), thread = add_string(r, "thread");
    fd.start_label = start ? root_label(&fd, start) : 0;
    fd.thread_label = thread ? root_label(&fd, thread) : 0;
    if (!fd.start_label || !fd.thread_label)
        goto out;
    for (size_t i = 0; i < r->sample_count; i++) {
        struct rec_sample *s = &r->samples[i];
        uint32_t id = fold_stack(&fd, s->stack, runtime_thread_name(r, s->thread));
        if (!id)
            goto out;
        s->stack = id;
    }
    for (size_t i = 0; i < r->record_count; i++) {
        struct rec_record *x = &r->records[i];
        if (!x->stack)
            continue;
        uint32_t name = x->thread ? runtime_thread_name(r, x->thread - 1) : 0;
        uint32_t id = fold_stack(&fd, x->stack, name);
        if (!id)
            goto out;
        x->stack = id;
    }
    rc = 0;
out:
    mem_free(fd.bits);
    mem_free(fd.by_stack);
    mem_free(fd.buf);
    map64_free(&fd.run_frame);
    map64_free(&fd.by_key);
    map64_free(&fd.by_hash);
    return rc;
}
