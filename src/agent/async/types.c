/*
 * types: see types.h.
 */
#include "agent/async/types.h"

#include <stdio.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/codemap.h"
#include "agent/log.h"
#include "agent/mdplace.h"
#include "agent/names.h"
#include "agent/signal/achain.h"
#include "clr/clr_guids.h"
#include "common/map.h"
#include "common/mem.h"
#include "common/utf.h"

#define LEVELS 24 /* ancestors looked at */
#define ARGS 8

static struct map64 node_of; /* MethodTable -> index into nodes */
static struct async_node *nodes;
static size_t node_count, node_cap;
static uint64_t unplaced;

/* One class of the ancestry: its ClassID, metadata and name. */
struct level {
    ClassID klass;
    ModuleID module;
    mdTypeDef token;
    ULONG32 nargs;
    ClassID args[ARGS];
    char name[512];
};

static IMetaDataImport *import_of(ICorProfilerInfo15 *info, ModuleID module)
{
    IUnknown *unk = NULL;
    if (mdplace_runtime_metadata(info, module, ofRead, &IID_IMetaDataImport, &unk) < 0)
        return NULL;
    return (IMetaDataImport *)unk;
}

static int read_level(ICorProfilerInfo15 *info, ClassID klass, struct level *l, ClassID *parent)
{
    memset(l, 0, sizeof *l);
    l->klass = klass;
    if (info->lpVtbl->GetClassIDInfo2(info, klass, &l->module, &l->token, parent, ARGS, &l->nargs,
                                      l->args) < 0 || !l->module || !l->token)
        return -1;
    if (l->nargs > ARGS)
        l->nargs = 0; /* more than we keep: none of the kinds we know */
    return names_type_of(info, l->module, l->token, l->name, sizeof l->name);
}

/* The offset of the field named `field` among those `l` itself declares,
 * -1 when absent. */
static int32_t field_offset(ICorProfilerInfo15 *info, const struct level *l, const char *field)
{
    int32_t off = -1;
    names_field_offsets(info, l->klass, l->module, &field, &off, 1);
    return off;
}

/* The same in levels[from] or the first of its ancestors that declares it. */
static int32_t inherited_offset(ICorProfilerInfo15 *info, const struct level *levels, size_t from,
                                size_t depth, const char *field)
{
    int32_t off = -1;
    for (size_t d = from; d < depth && off < 0; d++)
        off = field_offset(info, &levels[d], field);
    return off;
}

/* A CoreLib type definition by name, 0 when absent. */
static mdTypeDef corelib_typedef(ICorProfilerInfo15 *info, ModuleID module, const char *name)
{
    struct md md;
    if (mdplace_open(info, module, &md) == 0)
        return mdplace_find_type(&md, name);
    IMetaDataImport *import = import_of(info, module);
    if (!import)
        return 0;
    WCHAR w[256];
    utf8_to_utf16(name, w, 256);
    mdTypeDef td = 0;
    if (import->lpVtbl->FindTypeDefByName(import, w, 0, &td) < 0)
        td = 0;
    import->lpVtbl->Release(import);
    return td;
}

/* The ClassID of a CoreLib generic value type instantiated over one type,
 * 0 when unknown. */
static ClassID instantiate(ICorProfilerInfo15 *info, ModuleID module, const char *generic,
                           ClassID arg)
{
    mdTypeDef td = corelib_typedef(info, module, generic);
    ClassID out = 0;
    if (td && info->lpVtbl->GetClassFromTokenAndTypeArgs(info, module, td, 1, &arg, &out) < 0)
        out = 0;
    return out;
}

static ClassID corelib_class(ICorProfilerInfo15 *info, ModuleID module, const char *name)
{
    mdTypeDef td = corelib_typedef(info, module, name);
    ClassID out = 0;
    if (td && info->lpVtbl->GetClassFromToken(info, module, td, &out) < 0)
        out = 0;
    return out;
}

#define MRVTSC "System.Threading.Tasks.Sources.ManualResetValueTaskSourceCore`1"

/* Where ManualResetValueTaskSourceCore<T> keeps its continuation's state,
 * from the start of the struct; -1 when unknown. */
static int32_t continuation_state_offset(ICorProfilerInfo15 *info, ModuleID corelib, ClassID t)
{
    struct level l;
    ClassID parent = 0;
    ClassID core = instantiate(info, corelib, MRVTSC, t);
    if (!core || read_level(info, core, &l, &parent) < 0)
        return -1;
    return field_offset(info, &l, "_continuationState");
}

/* Where a box keeps its state machine's <>1__state. */
static void state_of(ICorProfilerInfo15 *info, const struct level *levels, size_t d, size_t depth,
                     ClassID sm, struct async_node *n)
{
    struct level sml;
    ClassID parent = 0;
    if (read_level(info, sm, &sml, &parent) < 0)
        return;
    /* a struct (a release build's state machine) derives from ValueType;
     * its GetClassLayout offsets start at its first field, as it lies in
     * the box; a class's at its MethodTable, as the box's reference finds
     * it */
    int value_type = 0;
    for (ClassID k = parent; k;) {
        struct level pl;
        ClassID up = 0;
        if (read_level(info, k, &pl, &up) < 0)
            break;
        if (!strcmp(pl.name, "System.ValueType")) {
            value_type = 1;
            break;
        }
        k = up;
    }
    n->class_sm = !value_type;
    n->state[0] = inherited_offset(info, levels, d, depth, "StateMachine");
    n->state[1] = field_offset(info, &sml, "<>1__state");
}

/* The state machine's MoveNext: its FunctionID and frame. */
static void method_of(struct agent *a, ClassID sm, struct async_node *n)
{
    ICorProfilerInfo15 *info = a->info;
    ModuleID module = 0;
    mdTypeDef td = 0;
    ClassID parent = 0;
    ULONG32 nargs = 0;
    if (info->lpVtbl->GetClassIDInfo2(info, sm, &module, &td, &parent, 0, &nargs, NULL) < 0)
        return;
    struct md tables;
    if (mdplace_open(info, module, &tables) == 0) {
        mdMethodDef move_next = mdplace_find_method(&tables, td, "MoveNext", NULL, NULL);
        FunctionID f = 0;
        if (move_next && info->lpVtbl->GetFunctionFromTokenAndTypeArgs(info, module, move_next,
                                                                       sm, 0, NULL, &f) >= 0 &&
            f) {
            n->move_next = f;
            n->method = names_function(&a->names, f);
        }
        return;
    }
    IMetaDataImport *import = import_of(info, module);
    if (!import)
        return;
    HCORENUM e = NULL;
    mdMethodDef md[4];
    ULONG got = 0;
    WCHAR w[16];
    utf8_to_utf16("MoveNext", w, 16);
    if (import->lpVtbl->EnumMethodsWithName(import, &e, td, w, md, 4, &got) >= 0 && got) {
        FunctionID f = 0;
        if (info->lpVtbl->GetFunctionFromTokenAndTypeArgs(info, module, md[0], sm, 0, NULL, &f) >=
                0 && f) {
            n->move_next = f;
            n->method = names_function(&a->names, f);
        }
    }
    if (e)
        import->lpVtbl->CloseEnum(import, e);
    import->lpVtbl->Release(import);
}

static const char *const box_names[] = {
    "System.Runtime.CompilerServices.AsyncTaskMethodBuilder`1+AsyncStateMachineBox`1",
    "System.Runtime.CompilerServices.PoolingAsyncValueTaskMethodBuilder`1+StateMachineBox`1",
};

/* Task subclasses shown by what made them. */
static const struct {
    const char *type;
    const char *shown;
} promises[] = {
    {"System.Threading.Tasks.Task+WhenAllPromise", "Task.WhenAll"},
    {"System.Threading.Tasks.Task+WhenAllPromise`1", "Task.WhenAll"},
    {"System.Threading.Tasks.Task+WhenAnyPromise`1", "Task.WhenAny"},
    {"System.Threading.Tasks.Task+TwoTaskWhenAnyPromise`1", "Task.WhenAny"},
    {"System.Threading.Tasks.TaskFactory+CompleteOnInvokePromise`1", "Task.WhenAny"},
    {"System.Threading.Tasks.UnwrapPromise`1", "Task.Run (unwrap)"},
};

/* Types followed through one field: (type, field). */
static const struct {
    const char *type;
    const char *field;
} followed[] = {
    {"System.Threading.Tasks.Task", "m_continuationObject"},
    {"System.Delegate", "_target"},
    {"System.Threading.Tasks.AwaitTaskContinuation", "m_action"},
    {"System.Threading.Tasks.ContinueWithTaskContinuation", "m_task"},
    {"System.Runtime.CompilerServices.AsyncMethodBuilderCore+ContinuationWrapper", "_continuation"},
};

/* Classifies a MethodTable into both tables' entries.  0, or -1 when the
 * runtime could not say. */
static int classify(struct agent *a, ClassID mt, struct achain_type *t, struct async_node *n)
{
    ICorProfilerInfo15 *info = a->info;
    static struct level levels[LEVELS];
    size_t depth = 0;
    for (ClassID k = mt; k && depth < LEVELS; depth++) {
        ClassID parent = 0;
        if (read_level(info, k, &levels[depth], &parent) < 0) {
            if (depth == 0)
                return -1;
            break;
        }
        k = parent;
    }
    memset(t, 0, sizeof *t);
    memset(n, 0, sizeof *n);
    atomic_store_explicit(&t->mt, (uintptr_t)mt, memory_order_relaxed);
    t->path[0] = t->path[1] = t->alt[0] = t->alt[1] = -1;
    t->kind = ACHAIN_END;
    n->kind = ACHAIN_END;
    n->flags = n->state[0] = n->state[1] = -1;
    for (size_t d = 0; d < depth; d++)
        if (!strcmp(levels[d].name, "System.Threading.Tasks.Task"))
            n->flags = field_offset(info, &levels[d], "m_stateFlags");

    /* a state machine box */
    for (size_t d = 0; d < depth; d++) {
        int pooling = !strcmp(levels[d].name, box_names[1]);
        if (strcmp(levels[d].name, box_names[0]) && !pooling)
            continue;
        if (levels[d].nargs != 2)
            return -1;
        ClassID result = levels[d].args[0], sm = levels[d].args[1];
        t->kind = n->kind = ACHAIN_BOX;
        n->pooling = (uint8_t)pooling;
        state_of(info, levels, d, depth, sm, n);
        if (pooling) {
            int32_t source = inherited_offset(info, levels, d, depth, "_valueTaskSource");
            int32_t state = continuation_state_offset(info, levels[d].module, result);
            if (source >= 0 && state >= 0)
                t->path[0] = source + state;
        } else {
            t->path[0] = inherited_offset(info, levels, d, depth, "m_continuationObject");
            /* an async iterator: its consumer awaits the state machine */
            struct level sml;
            ClassID sm_parent = 0;
            int32_t promise = read_level(info, sm, &sml, &sm_parent) == 0
                                  ? field_offset(info, &sml, "<>v__promiseOfValueOrEnd")
                                  : -1;
            if (promise >= 0) {
                /* the state machine's field makes its type loaded: asked
                 * for otherwise, GetClassFromTokenAndTypeArgs would load
                 * ManualResetValueTaskSourceCore<bool> from this thread,
                 * which runs no managed code (seen: a crash) */
                int32_t box_sm = inherited_offset(info, levels, d, depth, "StateMachine");
                ClassID boolean = corelib_class(info, levels[d].module, "System.Boolean");
                int32_t state = boolean ? continuation_state_offset(info, levels[d].module,
                                                                    boolean) : -1;
                if (box_sm >= 0 && state >= 0) {
                    t->alt[0] = box_sm;
                    t->alt[1] = promise + state;
                }
            }
        }
        method_of(a, sm, n);
        if (n->method)
            n->frame = recorder_label(&a->out, "async", NULL, n->method);
        return 0;
    }
    /* a list of continuations */
    if (!strcmp(levels[0].name, "System.Collections.Generic.List`1")) {
        t->kind = n->kind = ACHAIN_LIST;
        t->path[0] = field_offset(info, &levels[0], "_items");
        t->path[1] = field_offset(info, &levels[0], "_size");
        if (t->path[0] < 0 || t->path[1] < 0)
            t->kind = n->kind = ACHAIN_END;
        return 0;
    }
    if (!strcmp(levels[0].name, "System.Threading.Tasks.Task+SetOnInvokeMres")) {
        n->frame = recorder_label(&a->out, "blocking wait", NULL, 0);
        return 0;
    }
    for (size_t d = 0; d < depth; d++) {
        for (size_t i = 0; i < sizeof followed / sizeof followed[0]; i++) {
            if (strcmp(levels[d].name, followed[i].type))
                continue;
            t->path[0] = field_offset(info, &levels[d], followed[i].field);
            if (t->path[0] < 0)
                return 0; /* END */
            int task = i == 0;
            t->kind = n->kind = task ? ACHAIN_TASK : ACHAIN_FOLLOW;
            for (size_t p = 0; task && p < sizeof promises / sizeof promises[0]; p++)
                if (!strcmp(levels[0].name, promises[p].type))
                    n->frame = recorder_label(&a->out, "async", promises[p].shown, 0);
            return 0;
        }
    }
    return 0;
}

const struct async_node *async_node_of(struct agent *a, uint64_t mt, uint64_t seen_ns)
{
    uint32_t at;
    if (map64_get(&node_of, mt, &at))
        return nodes[at].kind ? &nodes[at] : NULL;
    if (!codemap_ids_begin(seen_ns))
        return NULL; /* unloaded since: the MethodTable may be another's now */
    struct achain_type t;
    struct async_node n;
    int ok = classify(a, (ClassID)mt, &t, &n) == 0;
    if (log_enabled(CONFIG_LOG_DEBUG)) {
        char name[512] = "?";
        names_describe_class(a->info, (ClassID)mt, name, sizeof name);
        log_debug("async: type %s: kind %u, path %d %d, alt %d %d", name, (unsigned)t.kind,
                  t.path[0], t.path[1], t.alt[0], t.alt[1]);
    }
    codemap_ids_end();
    if (!ok)
        memset(&n, 0, sizeof n);
    n.how = t;
    struct async_node *grown = mem_grow(nodes, &node_cap, node_count + 1, sizeof *nodes);
    if (!grown)
        return NULL;
    nodes = grown;
    nodes[node_count] = n;
    if (map64_put(&node_of, mt, (uint32_t)node_count) < 0)
        return NULL;
    node_count++;
    if (ok && achain_type_put(&t) < 0)
        unplaced++;
    return ok ? &nodes[node_count - 1] : NULL;
}

const struct async_node *async_node_known(uint64_t mt)
{
    uint32_t at;
    if (map64_get(&node_of, mt, &at))
        return nodes[at].kind ? &nodes[at] : NULL;
    return NULL;
}

void async_types_forget(void)
{
    achain_types_clear();
    map64_clear(&node_of);
    node_count = 0;
}

void async_types_free(void)
{
    achain_types_clear();
    map64_free(&node_of);
    mem_free(nodes);
    nodes = NULL;
    node_count = node_cap = 0;
}

uint64_t async_types_unplaced(void)
{
    return unplaced;
}
