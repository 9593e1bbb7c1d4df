/*
 * compose: see compose.h.
 */
#include "agent/async/compose.h"

#include <string.h>

#include "agent/agent.h"
#include "agent/async/types.h"
#include "agent/codemap.h"
#include "agent/names.h"
#include "agent/stacks.h"
#include "agent/signal/achain.h"
#include "common/map.h"

/* The runtime's methods between a runner and the code it resumes:
 * (type, method), method NULL for all of the type's. */
static const struct {
    const char *type;
    const char *method;
} glue[] = {
    {"System.Threading.ExecutionContext", NULL},
    {"System.Runtime.CompilerServices.AsyncTaskMethodBuilder`1+AsyncStateMachineBox`1", NULL},
    {"System.Runtime.CompilerServices.AsyncTaskMethodBuilder`1+DebugFinalizableAsyncStateMachineBox`1",
     NULL},
    {"System.Runtime.CompilerServices.PoolingAsyncValueTaskMethodBuilder`1+StateMachineBox`1",
     NULL},
    {"System.Threading.Tasks.Task", "ExecuteWithThreadLocal"},
    {"System.Threading.Tasks.Task", "ExecuteEntryUnsafe"},
    {"System.Threading.Tasks.Task", "ExecuteEntry"},
    {"System.Threading.Tasks.Task", "ExecuteFromThreadPool"},
    {"System.Threading.Tasks.Task", "InnerInvoke"},
    {"System.Threading.Tasks.Task+<>c", NULL},
    {"System.Threading.Tasks.Task`1", "InnerInvoke"},
};

static struct map64 glue_of; /* FunctionID -> 2 glue, 1 not */

static FunctionID function_at(const uint64_t *ips, uint32_t k)
{
    const struct code_range *r = code_index_find((uintptr_t)ips[k] - (k ? 1 : 0));
    return r ? r->function : 0;
}

static int is_glue(struct agent *a, FunctionID f, uint64_t seen_ns)
{
    if (!f)
        return 0;
    uint32_t known;
    if (map64_get(&glue_of, f, &known))
        return known == 2;
    int permanent = codemap_permanent(f);
    if (!permanent && !codemap_ids_begin(seen_ns))
        return 0;
    struct method_desc d;
    int yes = 0;
    if (names_describe(a->info, a->info_version, f, &d) == 0) {
        for (size_t i = 0; i < sizeof glue / sizeof glue[0] && !yes; i++)
            yes = !strcmp(d.type, glue[i].type) &&
                  (!glue[i].method || !strcmp(d.method, glue[i].method));
    }
    if (!permanent)
        codemap_ids_end();
    else
        map64_put(&glue_of, f, yes ? 2 : 1);
    return yes;
}

/* Do two FunctionIDs name one method (the code's own id and the one asked
 * for the state machine's MoveNext may differ for shared generic code)? */
static int same_method(struct agent *a, FunctionID x, FunctionID y, uint64_t seen_ns)
{
    if (!x || !y)
        return 0;
    if (x == y)
        return 1;
    if (!codemap_ids_begin(seen_ns))
        return 0;
    ClassID kx = 0, ky = 0;
    ModuleID mx = 0, my = 0;
    mdToken tx = 0, ty = 0;
    ULONG32 n = 0;
    int same = a->info->lpVtbl->GetFunctionInfo2(a->info, x, 0, &kx, &mx, &tx, 0, &n, NULL) >= 0 &&
               a->info->lpVtbl->GetFunctionInfo2(a->info, y, 0, &ky, &my, &ty, 0, &n, NULL) >= 0 &&
               mx == my && tx == ty;
    codemap_ids_end();
    return same;
}

int async_compose(struct agent *a, struct stackb *b, const uint64_t *ips,
                  const struct async_chain *c, uint64_t seen_ns)
{
    if (!c->count || c->runner >= b->n)
        return 0;
    /* leafward of the runner, past the glue */
    uint32_t keep = c->runner;
    while (keep > 0 && is_glue(a, function_at(ips, keep - 1), seen_ns))
        keep--;
    b->n = keep;
    const struct async_node *first = async_node_of(a, c->mts[0], seen_ns);
    if (first && first->kind == ACHAIN_BOX && first->method &&
        !(keep > 0 && same_method(a, function_at(ips, keep - 1), first->move_next, seen_ns)))
        stackb_put(b, first->method); /* the JIT inlined it into the glue */
    for (uint32_t i = 1; i < c->count; i++) {
        const struct async_node *n = async_node_of(a, c->mts[i], seen_ns);
        if (n && n->frame)
            stackb_put(b, n->frame);
    }
    return 1;
}

void async_compose_forget(void)
{
    map64_clear(&glue_of);
}
