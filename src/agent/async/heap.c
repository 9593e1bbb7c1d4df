/*
 * heap: see heap.h.  The walk needs ICorProfilerInfo15
 * (EnumerateGCHeapObjects): its one caller, sources/async_snapshots.c,
 * runs it only when the runtime's info_version is 15 or more.
 */
#include "agent/async/heap.h"

#include <limits.h>
#include <string.h>

#include "agent/async/types.h"
#include "common/mem.h"

#define HOPS 32 /* continuation objects between two operations, at most */

void heap_snapshot_init(struct heap_snapshot *s)
{
    memset(s, 0, sizeof *s);
}

void heap_snapshot_free(struct heap_snapshot *s)
{
    mem_free(s->ops);
    map64_free(&s->unknown);
    memset(s, 0, sizeof *s);
}

/* The heap does not move while the runtime is suspended: plain reads of
 * live objects' fields. */
static uintptr_t word_at(uintptr_t p)
{
    return p && !(p & 7) ? *(const uintptr_t *)p : 0;
}

static uintptr_t follow(uintptr_t obj, const int32_t path[2])
{
    if (path[0] < 0)
        return 0;
    uintptr_t p = obj;
    for (int i = 0; i < 2 && path[i] >= 0 && p; i++)
        p = word_at(p + (uint32_t)path[i]);
    return p;
}

static uintptr_t next_of(uintptr_t obj, const struct async_node *n)
{
    const struct achain_type *t = &n->how;
    if (n->kind == ACHAIN_LIST) {
        uintptr_t items = word_at(obj + (uint32_t)t->path[0]);
        uint32_t count = *(const uint32_t *)(obj + (uint32_t)t->path[1]);
        for (uint32_t i = 0; items && i < count && i < 8; i++) {
            uintptr_t x = word_at(items + ACHAIN_ARRAY_DATA + 8 * (uintptr_t)i);
            if (x)
                return x;
        }
        return 0;
    }
    uintptr_t next = follow(obj, t->path);
    if (!next && t->alt[0] >= 0)
        next = follow(obj, t->alt);
    return next;
}

/* An operation: a box, or a Task the logical stacks show (a combinator). */
static int is_operation(const struct async_node *n)
{
    return n->kind == ACHAIN_BOX || (n->kind == ACHAIN_TASK && n->frame);
}

static int pending(uintptr_t obj, const struct async_node *n)
{
    if (n->flags >= 0)
        return !(*(const uint32_t *)(obj + (uint32_t)n->flags) & ASYNC_TASK_DONE);
    if (n->pooling)
        return next_of(obj, n) != 0;
    return 0;
}

static int32_t state_of(uintptr_t obj, const struct async_node *n)
{
    if (n->kind != ACHAIN_BOX || n->state[0] < 0 || n->state[1] < 0)
        return INT32_MIN;
    uintptr_t sm = obj + (uint32_t)n->state[0];
    if (n->class_sm)
        sm = word_at(sm);
    return sm ? *(const int32_t *)(sm + (uint32_t)n->state[1]) : INT32_MIN;
}

struct walk {
    struct heap_snapshot *s;
};

static BOOL STDMETHODCALLTYPE on_object(ObjectID object, void *ctx)
{
    struct heap_snapshot *s = ((struct walk *)ctx)->s;
    s->objects++;
    uintptr_t mt = word_at(object);
    const struct async_node *n = async_node_known(mt);
    if (!n) {
        uint32_t seen;
        if (mt && !map64_get(&s->unknown, mt, &seen) && map64_put(&s->unknown, mt, 1) < 0)
            s->failed = 1;
        return TRUE;
    }
    if (!is_operation(n) || !pending(object, n))
        return TRUE;
    struct heap_op op = {object, mt, state_of(object, n), 0, 0};
    /* up the chain to the next operation, or to its end */
    uintptr_t p = next_of(object, n);
    for (int hop = 0; p && hop < HOPS; hop++) {
        uintptr_t pmt = word_at(p);
        const struct async_node *pn = async_node_known(pmt);
        if (!pn) {
            uint32_t seen;
            if (pmt && !map64_get(&s->unknown, pmt, &seen))
                map64_put(&s->unknown, pmt, 1);
            break;
        }
        if (is_operation(pn)) {
            op.awaiter = p;
            break;
        }
        if (pn->kind == ACHAIN_END) {
            op.end_frame = pn->frame;
            break;
        }
        p = next_of(p, pn);
    }
    struct heap_op *grown = mem_grow(s->ops, &s->cap, s->count + 1, sizeof *s->ops);
    if (!grown) {
        s->failed = 1;
        return TRUE;
    }
    s->ops = grown;
    s->ops[s->count++] = op;
    return TRUE;
}

HRESULT heap_walk(ICorProfilerInfo15 *info, struct heap_snapshot *s)
{
    s->count = 0;
    s->objects = 0;
    s->failed = 0;
    map64_clear(&s->unknown);
    struct walk w = {s};
    return info->lpVtbl->EnumerateGCHeapObjects(info, on_object, &w);
}
