/*
 * methods: see methods.h.  The table of client ids is chunked so that an
 * entry never moves: the hooks' slow paths and the exception callbacks
 * read it without a lock (an entry is complete before its id is handed to
 * the JIT).  The decisions (FunctionID -> client id, 0 for a method left
 * out) are a map under a mutex, taken only at JIT time and never across a
 * call into the runtime.
 */
#include "agent/trace/methods.h"

#include <pthread.h>
#include <regex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/log.h"
#include "agent/names.h"
#include "common/map.h"
#include "common/mem.h"
#include "common/path.h"

#define CHUNK 4096u
#define MAX_CHUNKS 4096u

static ICorProfilerInfo15 *runtime;
static int runtime_version;
static regex_t include_re, exclude_re;
static int has_include, has_exclude;

/* The default scope's memory of modules (under the lock): each module's
 * path seen at a decision, and whether it is the program's own; more than
 * MAX_MODULES are classified each time and counted in modules_more. */
#define MAX_MODULES 512u
struct module_seen {
    char *path;
    int own;
};
static struct module_seen modules[MAX_MODULES];
static uint32_t module_count, modules_more;
static char dotnet_root[NAMES_CHARS]; /* ".../" holding shared/, sdk/, packs/; "" unknown */
static char nuget_cache[NAMES_CHARS]; /* ".../.nuget/packages/" or $NUGET_PACKAGES/ */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct map64 decided; /* FunctionID -> client id, 0 = not traced */
static struct trace_method *chunks[MAX_CHUNKS];
static _Atomic uint32_t next_id = 1; /* ids below it are complete */
static _Atomic uint64_t excluded, unnamed, refused;

void methods_display_name(const char *type, const char *method, uint32_t arity, char *out,
                          size_t size)
{
    int n = type[0] ? snprintf(out, size, "%s.%s", type, method) : snprintf(out, size, "%s", method);
    if (arity && n >= 0 && (size_t)n < size)
        snprintf(out + n, size - (size_t)n, "``%u", arity);
}

int methods_name_traced(const char *display)
{
    if (has_include && regexec(&include_re, display, 0, NULL, 0) != 0)
        return 0;
    if (has_exclude && regexec(&exclude_re, display, 0, NULL, 0) == 0)
        return 0;
    return 1;
}

int methods_filtered(void)
{
    return has_include || has_exclude;
}

static int has_prefix(const char *s, const char *prefix)
{
    return prefix[0] && !strncmp(s, prefix, strlen(prefix));
}

int methods_framework_name(const char *file)
{
    static const char *const exact[] = {"System.dll", "netstandard.dll", "mscorlib.dll",
                                        "WindowsBase.dll"};
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (!strcmp(file, exact[i]))
            return 1;
    return !strncmp(file, "System.", 7) || !strncmp(file, "Microsoft.", 10);
}

/* The runtime's own directory tells where the dotnet installation is when
 * it is a shared framework's (<root>/shared/Microsoft.NETCore.App/<version>/);
 * a self-contained program's runtime sits beside the program, which says
 * nothing about the program's other files. */
static void learn_root(const char *corelib)
{
    const char *at = strstr(corelib, "/shared/Microsoft.NETCore.App/");
    if (at && !dotnet_root[0] && (size_t)(at - corelib) + 2 < sizeof dotnet_root)
        snprintf(dotnet_root, sizeof dotnet_root, "%.*s/", (int)(at - corelib), corelib);
}

int methods_own_module(const char *path)
{
    const char *file = path_basename(path);
    if (!strcmp(file, "System.Private.CoreLib.dll"))
        learn_root(path);
    if (methods_framework_name(file) || path[0] == '[') /* [dynamic]: the runtime's stubs */
        return 0;
    if (has_prefix(path, nuget_cache) || strstr(path, "/.nuget/packages/"))
        return 0;
    if (dotnet_root[0] && has_prefix(path, dotnet_root)) {
        const char *rest = path + strlen(dotnet_root);
        if (!strncmp(rest, "shared/", 7) || !strncmp(rest, "sdk/", 4) ||
            !strncmp(rest, "packs/", 6))
            return 0;
    }
    return 1;
}

/* Under the lock: is the module the program's own (remembered). */
static int module_own(const char *path)
{
    for (uint32_t i = 0; i < module_count; i++)
        if (!strcmp(modules[i].path, path))
            return modules[i].own;
    int own = methods_own_module(path);
    char *copy = module_count < MAX_MODULES ? mem_strdup(path) : NULL;
    if (copy) {
        modules[module_count].path = copy;
        modules[module_count++].own = own;
    } else {
        modules_more++;
    }
    return own;
}

static int compile(regex_t *re, const char *text, const char *what, char *err, size_t err_size)
{
    int rc = regcomp(re, text, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        char why[128];
        regerror(rc, re, why, sizeof why);
        snprintf(err, err_size, "--%s %s: %s", what, text, why);
        return -1;
    }
    return 0;
}

int methods_init(ICorProfilerInfo15 *info, int info_version, const char *include,
                 const char *exclude, char *err, size_t err_size)
{
    runtime = info;
    runtime_version = info_version;
    if (has_include)
        regfree(&include_re);
    if (has_exclude)
        regfree(&exclude_re);
    has_include = has_exclude = 0;
    if (include && include[0]) {
        if (compile(&include_re, include, "include", err, err_size) < 0)
            return -1;
        has_include = 1;
    }
    if (exclude && exclude[0]) {
        if (compile(&exclude_re, exclude, "exclude", err, err_size) < 0)
            return -1;
        has_exclude = 1;
    }
    const char *cache = getenv("NUGET_PACKAGES"), *home = getenv("HOME");
    nuget_cache[0] = dotnet_root[0] = '\0';
    if (cache && cache[0] == '/')
        snprintf(nuget_cache, sizeof nuget_cache, "%s%s", cache,
                 cache[strlen(cache) - 1] == '/' ? "" : "/");
    else if (home && home[0] == '/')
        snprintf(nuget_cache, sizeof nuget_cache, "%s/.nuget/packages/", home);
    pthread_mutex_lock(&lock);
    map64_free(&decided);
    map64_init(&decided);
    pthread_mutex_unlock(&lock);
    return 0;
}

static struct trace_method *entry(uint32_t id)
{
    return &chunks[id / CHUNK][id % CHUNK];
}

struct trace_method *methods_get(uint64_t id)
{
    if (id == 0 || id >= atomic_load_explicit(&next_id, memory_order_acquire))
        return NULL;
    return entry((uint32_t)id);
}

FunctionID methods_function(uint64_t id)
{
    struct trace_method *m = methods_get(id);
    return m ? m->function : 0;
}

static int same_method(const struct trace_method *m, const struct method_desc *d)
{
    return m->arity == d->arity && !strcmp(m->name, d->method) && !strcmp(m->type, d->type) &&
           !strcmp(m->module, d->module);
}

/* Under the lock: a new client id for a described method, 0 when out of
 * memory or ids. */
static uint32_t add_method(FunctionID function, const struct method_desc *d)
{
    uint32_t id = atomic_load_explicit(&next_id, memory_order_relaxed);
    if (id / CHUNK >= MAX_CHUNKS)
        return 0;
    if (!chunks[id / CHUNK]) {
        chunks[id / CHUNK] = mem_calloc(CHUNK, sizeof(struct trace_method));
        if (!chunks[id / CHUNK])
            return 0;
    }
    struct trace_method *m = entry(id);
    m->module = mem_strdup(d->module);
    m->type = mem_strdup(d->type);
    m->name = mem_strdup(d->method);
    if (!m->module || !m->type || !m->name) {
        mem_free(m->module);
        mem_free(m->type);
        mem_free(m->name);
        memset(m, 0, sizeof *m);
        return 0;
    }
    m->function = function;
    m->arity = d->arity;
    atomic_store_explicit(&next_id, id + 1, memory_order_release);
    return id;
}

/* The runtime's exception dispatch, in CoreLib since .NET 9
 * (System.Runtime.EH and its nested types, the StackFrameIterator it walks
 * with, and the InternalCalls it makes):
 * never traced.  .NET 9 enters RhThrowEx and DispatchEx and never returns
 * from them, and the funclet callers return into frames the unwinder has
 * already closed; left out, their time is the throwing method's, and the
 * catch, finally and filter blocks' callees hang under the method whose
 * block they are in. */
static int exception_dispatch(const struct method_desc *d)
{
    if (strcmp(path_basename(d->module), "System.Private.CoreLib.dll") != 0)
        return 0;
    if (!strncmp(d->type, "System.Runtime.EH", 17) && (!d->type[17] || d->type[17] == '+'))
        return 1;
    return !strcmp(d->type, "System.Runtime.StackFrameIterator") ||
           !strcmp(d->type, "System.Runtime.ExceptionServices.InternalCalls");
}

/* Names the method and decides (again: the mapper runs at every compile of
 * a body, and a FunctionID may have been reused).  Returns its client id, 0
 * when it is not traced; *known says whether the id was decided before. */
static uint32_t decide(FunctionID function, int *known)
{
    struct method_desc d;
    *known = 0;
    if (names_describe(runtime, runtime_version, function, &d) < 0) {
        atomic_fetch_add(&unnamed, 1);
        return 0;
    }
    char display[3 * NAMES_CHARS];
    methods_display_name(d.type, d.method, d.arity, display, sizeof display);
    int traced = !exception_dispatch(&d) && methods_name_traced(display);
    pthread_mutex_lock(&lock);
    if (traced && !methods_filtered())
        traced = module_own(d.module);
    uint32_t id = 0;
    *known = map64_get(&decided, function, &id);
    if (*known && id && !same_method(entry(id), &d))
        *known = 0; /* the id was reused for another method */
    if (!*known) {
        id = traced ? add_method(function, &d) : 0;
        map64_put(&decided, function, id);
    }
    pthread_mutex_unlock(&lock);
    if (!*known && !traced)
        atomic_fetch_add(&excluded, 1);
    return id;
}

UINT_PTR STDMETHODCALLTYPE methods_mapper(FunctionID function, void *client, BOOL *hook)
{
    (void)client;
    int known;
    uint32_t id = decide(function, &known);
    *hook = id ? TRUE : FALSE;
    return id ? (UINT_PTR)id : (UINT_PTR)function;
}

uint32_t methods_decide(FunctionID function)
{
    uint32_t id = 0;
    pthread_mutex_lock(&lock);
    int known = map64_get(&decided, function, &id);
    pthread_mutex_unlock(&lock);
    return known ? id : decide(function, &known);
}

int methods_inline(FunctionID caller, FunctionID callee)
{
    (void)caller;
    uint32_t id = 0;
    pthread_mutex_lock(&lock);
    int known = map64_get(&decided, callee, &id);
    pthread_mutex_unlock(&lock);
    if (!known)
        id = decide(callee, &known);
    if (id)
        atomic_fetch_add(&refused, 1);
    return id == 0;
}

void methods_scope(char *out, size_t size)
{
    size_t o = 0;
    uint32_t own = 0, shown = 0;
    out[0] = '\0';
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; i < module_count; i++) {
        if (!modules[i].own)
            continue;
        own++;
        if (shown < 12 && o + NAMES_CHARS / 4 < size) {
            int n = snprintf(out + o, size - o, "%s%s", shown ? ", " : "",
                             path_basename(modules[i].path));
            if (n > 0 && (size_t)n < size - o) {
                o += (size_t)n;
                shown++;
            }
        }
    }
    if (own > shown && o < size)
        o += (size_t)snprintf(out + o, size - o, " and %u more", own - shown);
    if (!own && o < size)
        o += (size_t)snprintf(out + o, size - o, "none");
    if (o < size)
        snprintf(out + o, size - o, "; not traced: %u assemblies of the framework and packages",
                 module_count - own + modules_more);
    pthread_mutex_unlock(&lock);
}

void methods_counts(uint64_t *traced, uint64_t *left_out, uint64_t *not_named,
                    uint64_t *inlines_refused)
{
    *traced = atomic_load(&next_id) - 1;
    *left_out = atomic_load(&excluded);
    *not_named = atomic_load(&unnamed);
    *inlines_refused = atomic_load(&refused);
}

uint32_t methods_add_for_test(FunctionID function, const char *type, const char *name)
{
    struct method_desc *d = mem_calloc(1, sizeof *d);
    if (!d)
        return 0;
    snprintf(d->module, sizeof d->module, "test.dll");
    snprintf(d->type, sizeof d->type, "%s", type);
    snprintf(d->method, sizeof d->method, "%s", name);
    pthread_mutex_lock(&lock);
    uint32_t id = add_method(function, d);
    if (id)
        map64_put(&decided, function, id);
    pthread_mutex_unlock(&lock);
    mem_free(d);
    return id;
}

void methods_reset_for_test(void)
{
    pthread_mutex_lock(&lock);
    uint32_t n = atomic_load(&next_id);
    for (uint32_t id = 1; id < n; id++) {
        struct trace_method *m = entry(id);
        mem_free(m->module);
        mem_free(m->type);
        mem_free(m->name);
    }
    for (uint32_t c = 0; c < MAX_CHUNKS && chunks[c]; c++) {
        mem_free(chunks[c]);
        chunks[c] = NULL;
    }
    atomic_store(&next_id, 1);
    map64_free(&decided);
    map64_init(&decided);
    if (has_include)
        regfree(&include_re);
    if (has_exclude)
        regfree(&exclude_re);
    has_include = has_exclude = 0;
    for (uint32_t i = 0; i < module_count; i++)
        mem_free(modules[i].path);
    module_count = modules_more = 0;
    pthread_mutex_unlock(&lock);
}
