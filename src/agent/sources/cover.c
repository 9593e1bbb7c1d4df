/*
 * cover: code coverage by IL rewriting at JIT time (`corscope cover`).
 *
 * Modules.  At ModuleLoadFinished the assembly is read from its file with
 * its portable PDB (common/pdb/assembly.h), on the loading thread, with no
 * lock held.  It is covered unless it is the framework or the SDK (under
 * the .NET installation System.Private.CoreLib came from), a NuGet package, test
 * infrastructure (xunit, the test platform ...), a test assembly (it
 * references a test framework), or left out by --exclude -- each of which
 * an --include naming the assembly overrides.  An assembly without a
 * usable PDB is listed as such and left alone, unless included by name:
 * then each method counts its entries.  What was decided goes into the
 * counter file (format/covfile.h) as the module's record.
 *
 * Methods.  At JITCompilationStarted of a method the plan (format/
 * covplan.h) says where its probes go; each probe gets a 64-bit counter
 * in the counter file, and the body is rewritten (agent/il) with, at each
 * probe, code that adds 1 to that counter by its address -- no metadata,
 * no call.  The new body goes to SetILFunctionBody (through the module's
 * IMethodMalloc) once per method, before its first compilation: every
 * later compile (each generic instantiation, tier 1, OSR) reads the same
 * IL from the runtime, so the probes are in every tier.  The offset map
 * goes to SetILInstrumentedCodeMap, so debuggers and stack traces keep
 * the original offsets.  A body the engine refuses, a PDB it cannot read,
 * a runtime that refuses the body: that method is left as it was and
 * listed (a SKIPPED record); the program never sees a half-done method.
 *
 * The runtime's shortcuts that would skip the probes:
 *   - ReadyToRun code of covered modules is refused per method
 *     (JITCachedFunctionSearchStarted), so their methods are compiled;
 *   - inlining a method that will be instrumented but is not yet is
 *     refused (JITInlining): the inliner reads the callee's IL, which is
 *     the rewritten one once it was set, so later inlining keeps probes.
 *
 * Threads.  JIT callbacks come on any thread, several at once.  The module
 * table is appended under a mutex and read without one.  Each method has a
 * state byte: the first thread to move it from unknown to busy rewrites
 * it; another thread compiling the same method (another instantiation)
 * waits for that, briefly (microseconds of work and a few runtime calls),
 * in preemptive mode.  No lock of ours is held across a runtime call.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/names.h"
#include "agent/il/il.h"
#include "agent/il_install.h"
#include "agent/log.h"
#include "agent/recorder.h"
#include "common/mem.h"
#include "common/pdb/assembly.h"
#include "common/utf.h"
#include "format/covfile.h"
#include "format/covplan.h"

#define MAX_MODULES 4096
#define BUSY_WAIT_NS 2000000000ull

enum { STATE_UNKNOWN = 0, STATE_BUSY = 1, STATE_DONE = 2, STATE_LEFT = 3 };

struct cover_module {
    ModuleID id;
    _Atomic int dead;          /* unloading: its id may be reused */
    uint32_t mode;             /* COVFILE_COVERED or COVFILE_METHODS_ONLY */
    uint32_t index;            /* its record in the counter file */
    struct assembly assembly;
    uint8_t *candidate;        /* [row]: a method the plan may instrument */
    _Atomic uint8_t *state;    /* [row]: STATE_* */
};

struct cover {
    ICorProfilerInfo15 *info;
    struct covfile file;
    char dotnet_root[PATH_MAX]; /* ".../dotnet/": the framework and the SDK */
    struct covplan_filters include, exclude;
    pthread_mutex_t modules_lock;
    struct cover_module *modules[MAX_MODULES];
    _Atomic uint32_t module_count;
    _Atomic uint64_t instrumented, left, inlines_refused, r2r_refused, waits;
};

static struct cover *state_of(struct source *s)
{
    return s->state;
}

/* ---- modules ---------------------------------------------------------------------- */

static struct cover_module *find_module(struct cover *c, ModuleID id)
{
    uint32_t n = atomic_load_explicit(&c->module_count, memory_order_acquire);
    for (uint32_t i = n; i-- > 0;) {
        struct cover_module *m = c->modules[i];
        if (m->id == id && !atomic_load_explicit(&m->dead, memory_order_relaxed))
            return m;
    }
    return NULL;
}

/* Test infrastructure and tools: never the code under test. */
static int infrastructure(const char *name)
{
    static const char *const prefixes[] = {
        "Microsoft.TestPlatform.", "Microsoft.VisualStudio.TestPlatform.", "Microsoft.VisualStudio.CodeCoverage",
        "Microsoft.CodeCoverage", "Microsoft.Testing.", "Microsoft.NET.Test.Sdk", "testhost",
        "xunit", "NUnit", "nunit.", "MSTest.", "Microsoft.VisualStudio.TestTools", "coverlet.",
        "TUnit", "NSubstitute", "Moq", "FluentAssertions", "Castle.Core",
    };
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
            return 1;
    return 0;
}

static int in_package_cache(const char *path)
{
    const char *packages = getenv("NUGET_PACKAGES");
    if (packages && packages[0] && !strncmp(path, packages, strlen(packages)))
        return 1;
    return strstr(path, "/.nuget/packages/") != NULL;
}

/* Does any type of the assembly pass --include? */
static int some_type_included(const struct cover *c, const struct assembly *a)
{
    char name[1024];
    for (uint32_t t = 1; t <= a->type_count; t++) {
        assembly_type_name(a, a->types[t - 1].user, name, sizeof name);
        if (covplan_filters_match(&c->include, name))
            return 1;
    }
    return 0;
}

/* Why an assembly's PDB cannot be used, into buf. */
static const char *pdb_words(const struct assembly *a, char *buf, size_t size)
{
    switch (a->pdb_state) {
    case ASSEMBLY_PDB_WINDOWS: return "only a Windows PDB (not portable)";
    case ASSEMBLY_PDB_MISMATCH: return "its PDB is from another build";
    case ASSEMBLY_PDB_BAD:
        snprintf(buf, size, "its PDB could not be read (%s)",
                 a->pdb_problem ? a->pdb_problem : "malformed");
        return buf;
    default: return "no PDB";
    }
}

static void module_loaded(struct cover *c, ModuleID id)
{
    char path[PATH_MAX];
    if (names_module_file(c->info, id, path, sizeof path) < 0)
        return;
    /* the .NET installation (shared frameworks, the SDK and its tools):
     * the directory above the shared framework System.Private.CoreLib came
     * from (it loads first) */
    const char *shared = strstr(path, "/shared/Microsoft.NETCore.App/");
    if (!c->dotnet_root[0] && shared && strstr(path, "/System.Private.CoreLib.dll"))
        snprintf(c->dotnet_root, sizeof c->dotnet_root, "%.*s/", (int)(shared - path), path);
    const char *file = strrchr(path, '/') + 1;
    char name[256];
    snprintf(name, sizeof name, "%s", file);
    char *dot = strrchr(name, '.');
    if (dot && (!strcmp(dot, ".dll") || !strcmp(dot, ".exe")))
        *dot = '\0';
    int explicit = covplan_filters_match(&c->include, name);
    if (covplan_filters_match(&c->exclude, name))
        return;
    int framework = c->dotnet_root[0] ? !strncmp(path, c->dotnet_root, strlen(c->dotnet_root))
                                      : shared != NULL;
    if (!explicit && (framework || in_package_cache(path) || infrastructure(name)))
        return;

    struct cover_module *m = mem_calloc(1, sizeof *m);
    if (!m)
        return;
    char why[256], words[300];
    if (assembly_open(&m->assembly, path, why, sizeof why) < 0) {
        log_debug("cover: %s: %s", path, why);
        mem_free(m);
        return;
    }
    struct assembly *a = &m->assembly;
    if (!explicit && a->test_assembly) {
        log_debug("cover: %s is a test assembly: not covered (--include %s covers it)", path, a->name);
        goto drop;
    }
    if (!explicit && c->include.count && !some_type_included(c, a))
        goto drop;
    m->id = id;
    m->mode = assembly_has_pdb(a) ? COVFILE_COVERED : COVFILE_METHODS_ONLY;
    if (m->mode == COVFILE_METHODS_ONLY && !explicit) {
        /* listed, not covered */
        covfile_module(&c->file, a->mvid, COVFILE_NO_PDB, (uint32_t)a->pdb_state, path, a->name,
                       pdb_words(a, words, sizeof words));
        goto drop;
    }
    m->candidate = mem_calloc(a->method_count + 1, 1);
    m->state = mem_calloc(a->method_count + 1, 1);
    if (!m->candidate || !m->state)
        goto drop;
    uint32_t candidates = 0;
    for (uint32_t row = 1; row <= a->method_count; row++) {
        m->candidate[row] = (uint8_t)covplan_candidate(a, row, m->mode == COVFILE_METHODS_ONLY,
                                                       &c->include, &c->exclude, explicit);
        candidates += m->candidate[row];
    }
    long index = covfile_module(&c->file, a->mvid, m->mode, (uint32_t)a->pdb_state, path, a->name,
                                m->mode == COVFILE_METHODS_ONLY ? pdb_words(a, words, sizeof words) : "");
    if (index < 0)
        goto drop;
    m->index = (uint32_t)index;
    pthread_mutex_lock(&c->modules_lock);
    uint32_t n = atomic_load_explicit(&c->module_count, memory_order_relaxed);
    if (n < MAX_MODULES) {
        c->modules[n] = m;
        atomic_store_explicit(&c->module_count, n + 1, memory_order_release);
        m = NULL;
    }
    pthread_mutex_unlock(&c->modules_lock);
    if (m)
        goto drop;
    log_debug("cover: %s: %u methods to cover (%s)", path, candidates,
              assembly_has_pdb(a) ? a->pdb_path : "entries only");
    return;
drop:
    mem_free(m->candidate);
    mem_free((void *)m->state);
    assembly_close(&m->assembly);
    mem_free(m);
}

/* ---- methods ---------------------------------------------------------------------- */

static void leave_alone(struct cover *c, struct cover_module *m, uint32_t token, uint32_t reason,
                        const char *why)
{
    covfile_skipped(&c->file, m->index, token, reason, why);
    atomic_fetch_add(&c->left, 1);
    log_debug("cover: %s method %08x left as it was: %s", m->assembly.name, token, why);
}

/* Rewrites one method (its state is busy, ours).  Returns the new state. */
static int instrument(struct cover *c, struct cover_module *m, FunctionID f, uint32_t token)
{
    ICorProfilerInfo15 *info = c->info;
    uint32_t row = token & 0xffffff;
    LPCBYTE old = NULL;
    ULONG old_size = 0;
    char why[256];
    if (info->lpVtbl->GetILFunctionBody(info, m->id, token, &old, &old_size) < 0 || !old) {
        leave_alone(c, m, token, COVFILE_SKIP_RUNTIME, "the runtime gave no IL body");
        return STATE_LEFT;
    }
    struct il_body body;
    if (il_parse(old, old_size, &body, why, sizeof why) < 0) {
        leave_alone(c, m, token, COVFILE_SKIP_ENGINE, why);
        return STATE_LEFT;
    }
    struct covplan plan;
    if (covplan_method(&m->assembly, row, &body, m->mode == COVFILE_METHODS_ONLY, &plan, why,
                       sizeof why) < 0) {
        il_body_free(&body);
        leave_alone(c, m, token, COVFILE_SKIP_PDB, why);
        return STATE_LEFT;
    }
    int result = STATE_LEFT;
    struct covfile_probe_desc *descs = NULL;
    struct il_edit edit;
    il_edit_init(&edit);
    struct il_rewritten out;
    memset(&out, 0, sizeof out);
    if (!plan.count)
        goto done; /* nothing to count (no visible point left) */
    /* the probes that count (a branch probe sharing a line's count has none) */
    descs = mem_alloc(plan.count * sizeof *descs);
    if (!descs) {
        leave_alone(c, m, token, COVFILE_SKIP_ENGINE, "out of memory");
        goto done;
    }
    uint32_t n = 0;
    for (uint32_t k = 0; k < plan.count; k++)
        if (plan.probes[k].same_as < 0)
            descs[n++] = (struct covfile_probe_desc){plan.probes[k].il_offset, plan.probes[k].kind,
                                                     plan.probes[k].path};
    uint64_t *counters;
    if (covfile_method(&c->file, m->index, token, descs, n, &counters) < 0) {
        leave_alone(c, m, token, COVFILE_SKIP_FULL, "the counter file is full");
        goto done;
    }
    for (uint32_t k = 0, counter = 0; k < plan.count; k++) {
        const struct covplan_probe *p = &plan.probes[k];
        if (p->same_as >= 0)
            continue;
        uint8_t snippet[IL_COUNTER_PROBE_SIZE];
        il_counter_probe(snippet, (uint64_t)(uintptr_t)&counters[counter++]);
        enum il_where where = p->kind == COVFILE_PROBE_LINE     ? IL_BEFORE
                              : p->kind == COVFILE_PROBE_BRANCH ? IL_EDGE
                                                                : IL_ENTRY;
        if (il_edit_add(&edit, &body, p->instr, where, p->path, snippet, sizeof snippet,
                        IL_COUNTER_PROBE_STACK, why, sizeof why) < 0) {
            leave_alone(c, m, token, COVFILE_SKIP_ENGINE, why);
            goto done;
        }
    }
    /* the rewrite is checked before the runtime sees it: an engine bug
     * leaves a method uncovered, never changes what it does */
    if (il_rewrite(&body, &edit, &out, why, sizeof why) < 0 ||
        il_check(&body, &edit, &out, why, sizeof why) < 0) {
        leave_alone(c, m, token, COVFILE_SKIP_ENGINE, why);
        goto done;
    }
    if (il_install(info, m->id, token, f, &out, why, sizeof why) < 0) {
        leave_alone(c, m, token, COVFILE_SKIP_RUNTIME, why);
        goto done;
    }
    atomic_fetch_add(&c->instrumented, 1);
    result = STATE_DONE;
done:
    il_rewritten_free(&out);
    il_edit_free(&edit);
    mem_free(descs);
    covplan_free(&plan);
    il_body_free(&body);
    return result;
}

static void sleep_briefly(void)
{
    struct timespec ts = {0, 50000};
    nanosleep(&ts, NULL);
}

static void jit_started(struct source *s, FunctionID f, int dynamic)
{
    struct cover *c = state_of(s);
    if (dynamic || !c)
        return;
    ClassID klass;
    ModuleID module;
    mdToken token;
    if (c->info->lpVtbl->GetFunctionInfo(c->info, f, &klass, &module, &token) < 0)
        return;
    struct cover_module *m = find_module(c, module);
    uint32_t row = token & 0xffffff;
    if (!m || (token >> 24) != MD_METHODDEF || !row || row > m->assembly.method_count ||
        !m->candidate[row])
        return;
    for (uint64_t waited = 0;; waited += 50000) {
        uint8_t st = STATE_UNKNOWN;
        if (atomic_compare_exchange_strong(&m->state[row], &st, STATE_BUSY)) {
            atomic_store(&m->state[row], (uint8_t)instrument(c, m, f, token));
            return;
        }
        if (st != STATE_BUSY)
            return; /* done (every tier and instantiation reads the new IL), or left */
        /* another instantiation of it is being rewritten: its IL is not
         * set yet */
        if (waited == 0)
            atomic_fetch_add(&c->waits, 1);
        if (waited >= BUSY_WAIT_NS)
            return;
        sleep_briefly();
    }
}

static void jit_inlining(struct source *s, FunctionID caller, FunctionID callee, BOOL *should_inline)
{
    (void)caller;
    struct cover *c = state_of(s);
    ClassID klass;
    ModuleID module;
    mdToken token;
    if (!c || c->info->lpVtbl->GetFunctionInfo(c->info, callee, &klass, &module, &token) < 0)
        return;
    struct cover_module *m = find_module(c, module);
    uint32_t row = token & 0xffffff;
    if (!m || !row || row > m->assembly.method_count || !m->candidate[row])
        return;
    /* the inliner reads the callee's IL: the rewritten one once set */
    uint8_t st = atomic_load(&m->state[row]);
    if (st == STATE_UNKNOWN || st == STATE_BUSY) {
        *should_inline = FALSE;
        atomic_fetch_add(&c->inlines_refused, 1);
    }
}

static void r2r_lookup(struct source *s, FunctionID f, BOOL *use_cached)
{
    struct cover *c = state_of(s);
    ClassID klass;
    ModuleID module;
    mdToken token;
    if (!c || c->info->lpVtbl->GetFunctionInfo(c->info, f, &klass, &module, &token) < 0)
        return;
    if (find_module(c, module)) {
        *use_cached = FALSE;
        atomic_fetch_add(&c->r2r_refused, 1);
    }
}

static void load(struct source *s, enum source_load_kind kind, int finished, uintptr_t id,
                 HRESULT status)
{
    struct cover *c = state_of(s);
    if (c && kind == SOURCE_LOAD_MODULE && finished && status >= 0)
        module_loaded(c, (ModuleID)id);
}

static void module_unloading(struct source *s, ModuleID module)
{
    struct cover *c = state_of(s);
    struct cover_module *m = c ? find_module(c, module) : NULL;
    if (m)
        atomic_store(&m->dead, 1);
}

static const struct source_hooks hooks = {
    .jit_started = jit_started,
    .jit_inlining = jit_inlining,
    .r2r_lookup = r2r_lookup,
    .load = load,
    .module_unloading = module_unloading,
};

/* ---- life ------------------------------------------------------------------------- */

static int cover_init(struct agent *a, struct source *s, DWORD *mask, DWORD *high)
{
    (void)high;
    struct cover *c = mem_calloc(1, sizeof *c);
    if (!c) {
        log_error("coverage: out of memory");
        return -1;
    }
    c->info = a->info;
    pthread_mutex_init(&c->modules_lock, NULL);
    if (covplan_filters_parse(&c->include, a->cfg.cover_include) < 0 ||
        covplan_filters_parse(&c->exclude, a->cfg.cover_exclude) < 0) {
        log_error("coverage: out of memory");
        mem_free(c);
        return -1;
    }
    char command[256];
    recorder_command_line(command, sizeof command);
    if (covfile_open(&c->file, a->cfg.cover, (long)getpid(), command) < 0) {
        log_error("coverage: cannot create a counter file in %s: %s", a->cfg.cover, strerror(errno));
        covplan_filters_free(&c->include);
        covplan_filters_free(&c->exclude);
        mem_free(c);
        return -1;
    }
    *mask |= COR_PRF_MONITOR_JIT_COMPILATION | COR_PRF_MONITOR_MODULE_LOADS |
             COR_PRF_MONITOR_CACHE_SEARCHES;
    s->state = c;
    return 0;
}

static void cover_finish(struct agent *a, struct source *s)
{
    (void)a;
    struct cover *c = state_of(s);
    if (!c)
        return;
    log_info("coverage: %llu methods instrumented, %llu left as they were, %llu inlinings and "
             "%llu ReadyToRun methods refused, %llu waits",
             (unsigned long long)atomic_load(&c->instrumented),
             (unsigned long long)atomic_load(&c->left),
             (unsigned long long)atomic_load(&c->inlines_refused),
             (unsigned long long)atomic_load(&c->r2r_refused),
             (unsigned long long)atomic_load(&c->waits));
    /* nothing is freed or unmapped: code compiled with the probes may run
     * until the process's last instant, and the counters are its memory */
}

const struct source_ops source_cover = {
    .name = "cover",
    .init = cover_init,
    .finish = cover_finish,
    .hooks = &hooks,
};
