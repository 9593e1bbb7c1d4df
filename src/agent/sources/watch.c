/*
 * watch: live probes (`corscope watch PATTERN`): the methods a pattern
 * names get, at entry and before each return, a call to a native probe
 * (watch.h, watch_probe.c) that reads their arguments, return value and
 * time; the loop pairs each return with its entry and sends corscope one
 * line per call over the control socket ("call TID START DURATION TEXT").
 *
 * Finding the methods (names: watch_names.c).  Each module's assembly is
 * read from its file (common/pdb/assembly.h, no runtime call) and every
 * method with a body
 * whose "Namespace.Type.Method" matches the pattern (fnmatch; a pattern
 * may leave out leading namespaces) is taken, overloads all; compiler-
 * generated methods only when named exactly.  The framework's assemblies
 * are looked at only when the pattern starts with System. or Microsoft.
 * Past --max-methods nothing is rewritten and corscope is told; when
 * nothing matches, it is told the nearest names.
 *
 * Rewriting (the new IL: watch_il.c).  Launched: the new IL is given at
 * the method's first
 * JITCompilationStarted (SetILFunctionBody, as coverage does), its
 * ReadyToRun code and inlining into callers refused, so every call is
 * seen.  Attached: RequestReJITWithInliners (callers that inlined it are
 * rejitted too) from the loop thread, the IL given in GetReJITParameters;
 * at the stop, RequestRevert restores the original code and the probes go
 * quiet (a frame still inside the old code calls a probe that returns at
 * once: the library stays loaded, see watch_init).  The runtime never
 * lets a profiler that used ReJIT detach: the agent then stays dormant
 * (lifecycle.c) until the process ends.
 * A body the engine refuses (il.h) or the runtime rejects is left as it
 * was and said so.
 *
 * A call that throws out of a watched method has no return: the runtime's
 * ExceptionUnwindFunctionEnter for its frame ends its line (`!! Type`),
 * with the class taken at ExceptionThrown.  Entries whose end never came
 * (still running, or a return dropped) wait in a bounded table and are
 * counted.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/agent.h"
#include "agent/agent_thread.h"
#include "agent/control_client.h"
#include "agent/evq.h"
#include "agent/il/il.h"
#include "agent/il_install.h"
#include "agent/log.h"
#include "agent/names.h"
#include "agent/sources/watch.h"
#include "clr/clr_guids.h"
#include "common/clock.h"
#include "common/mem.h"
#include "common/pdb/assembly.h"
#include "common/pdb/meta.h"
#include "common/utf.h"

#define MAX_MODULES 512
#define MAX_PENDING 1024
#define OUTBOX 1024   /* call lines waiting for room in the control socket */

enum { M_UNKNOWN, M_BUSY, M_DONE, M_LEFT };

struct wmodule {
    ModuleID id;
    struct assembly a;
    int framework;
    uint32_t sigs[2]; /* StandAloneSig tokens of the probes' calli (enter, exit), 0 until made */
};

/* A slot of watch_methods (the probes' table): filled once, never
 * changed, since rewritten code may call a probe with its index until the
 * process ends.  A method watched again in a later session (the agent
 * stays loaded, lifecycle_resume) takes its slot again when it would read
 * its values the same way; otherwise a new slot. */
struct wmethod {
    uint32_t module;              /* index in modules */
    mdMethodDef token;
    _Atomic int state;
    _Atomic uint32_t session;     /* the session that watches it (W.session), 0: none */
};

#define STACK_FRAMES CONFIG_WATCH_STACK_MAX

struct pending {
    pid_t tid;
    uint32_t method;
    uint64_t token;
    char text[900];   /* the call's records so far (a call message is at most CONTROL_MESSAGE_MAX) */
    uint32_t depth;               /* --stack: the entry's walk, leaf (the probe) first */
    uint64_t ips[STACK_FRAMES];
};

static struct {
    ICorProfilerInfo15 *info;
    int info_version;
    int attached;
    char pattern[CONFIG_WATCH_MAX];   /* the method part: Namespace.Type.Method */
    char params[CONFIG_WATCH_MAX];    /* 'Name(string,int)': "string,int" */
    int by_signature;                 /* a parameter list was given */
    char other_overloads[600];        /* the name matched, not the parameters: theirs */
    int framework_too;
    uint32_t max_methods;
    struct wmodule *modules[MAX_MODULES];
    _Atomic uint32_t module_count;
    pthread_mutex_t lock;         /* appending modules and methods */
    struct wmethod methods[WATCH_MAX_METHODS];
    _Atomic uint32_t method_count; /* slots used, in every session so far */
    uint32_t session;             /* this session's number, from 1 */
    uint32_t chosen;              /* methods this session watches */
    int too_many;                 /* matches past max_methods: nothing more rewritten */
    struct watch_where_expr where; /* --where, when where_set */
    int where_set;
    uint32_t fields;              /* --fields */
    ModuleID corelib;             /* System.Private.CoreLib's (values of T) */
    uint32_t where_skipped;       /* methods matched that --where cannot be said of */
    char where_why[400];          /* why, for the last of them */
    uint32_t matched_total;
    _Atomic uint64_t rewritten, left;
    /* loop only */
    struct pending pending[MAX_PENDING];
    uint32_t pending_count;
    uint64_t calls, unfinished, unpaired, unsent, throws;
    int reverted;
    char outbox[OUTBOX][CONTROL_MESSAGE_MAX];
    uint16_t outbox_len[OUTBOX];
    uint32_t outbox_head, outbox_count;
    uint64_t again_at[2];         /* attached: when to ask for the ReJIT again */
} W;


/* The slot for method token of module mi, described as *m, now this
 * session's: its own from an earlier session when that reads the same,
 * else a new one.  Returns its index, or -1 when the table is full. */
static long take_slot(uint32_t mi, mdMethodDef token, const struct watch_method *m)
{
    uint32_t n = atomic_load(&W.method_count);
    for (uint32_t i = 0; i < n; i++) {
        if (W.methods[i].module == mi && W.methods[i].token == token &&
            !memcmp(&watch_methods[i], m, sizeof *m)) {
            atomic_store(&W.methods[i].state, M_UNKNOWN);
            atomic_store(&W.methods[i].session, W.session);
            return (long)i;
        }
    }
    if (n >= WATCH_MAX_METHODS)
        return -1;
    watch_methods[n] = *m;
    W.methods[n].module = mi;
    W.methods[n].token = token;
    atomic_store(&W.methods[n].state, M_UNKNOWN);
    atomic_store(&W.methods[n].session, W.session);
    atomic_store_explicit(&W.method_count, n + 1, memory_order_release);
    return (long)n;
}

/* Warnings made while W.lock is held, written after it is released: a
 * log line is a blocking write to stderr (a pipe the program may drain
 * slowly, or not at all), and another thread's module load waits for the
 * lock meanwhile.  Control messages need no deferring: they are sent
 * without waiting (control_client.c). */
struct warnings {
    char text[4096];
    size_t len;
    uint32_t dropped;
};

static void warn_later(struct warnings *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn_later(struct warnings *w, const char *fmt, ...)
{
    size_t room = sizeof w->text - w->len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(w->text + w->len, room, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n + 1 >= room) {
        w->text[w->len] = '\0';
        w->dropped++;
        return;
    }
    w->len += (size_t)n + 1; /* each warning ends with its NUL */
}

static void warn_now(const struct warnings *w)
{
    for (size_t at = 0; at < w->len; at += strlen(w->text + at) + 1)
        log_warn("%s", w->text + at);
    if (w->dropped)
        log_warn("watch: %u more methods not watched (their reasons did not fit)", w->dropped);
}

/* Takes the methods of module mi the pattern names.  Returns how many.
 * Called with W.lock held: warnings go to w. */
static uint32_t match_module(uint32_t mi, struct warnings *w)
{
    struct wmodule *wm = W.modules[mi];
    const struct assembly *a = &wm->a;
    const char *method_part = watch_last_dot(W.pattern);
    int literal_generated = method_part[0] == '<' || method_part[0] == '.';
    uint32_t found = 0;
    static uint32_t taken[WATCH_MAX_METHODS];
    char name[768], why[160];
    for (uint32_t row = 1; row <= a->method_count; row++) {
        watch_full_name(a, row, name, sizeof name);
        if (!watch_pattern_matches(W.pattern, name) || !watch_has_body(a, row))
            continue;
        if (W.by_signature && !watch_signature_matches(a, row, W.params)) {
            char sig[200];
            watch_signature_text(a, row, sig, sizeof sig);
            size_t o = strlen(W.other_overloads);
            if (o + strlen(sig) + 3 < sizeof W.other_overloads)
                snprintf(W.other_overloads + o, sizeof W.other_overloads - o, "%s%s",
                         o ? ", " : "", sig);
            continue;
        }
        const char *mname = assembly_method_name(a, row);
        int generated = mname[0] == '<' || mname[0] == '.' || strchr(name, '<');
        if (generated && !literal_generated && strcmp(watch_last_dot(name), method_part))
            continue;
        W.matched_total++;
        if (W.too_many)
            continue;
        if (W.chosen >= W.max_methods) {
            W.too_many = 1;
            continue;
        }
        static struct watch_method described;
        memset(&described, 0, sizeof described); /* compared whole by take_slot */
        if (watch_describe_method(a, row, &described, (int)W.fields, why, sizeof why) < 0) {
            warn_later(w, "watch: %s is not watched: %s", name, why);
            continue;
        }
        /* --where: a method (an overload) it cannot be said of is not
         * watched; when no method is, corscope is told why (the last).
         * The filter is part of the slot: another session's --where takes
         * another slot (take_slot compares the whole description) */
        if (W.where_set &&
            watch_filter_bind(&W.where, &described, W.where_why, sizeof W.where_why) < 0) {
            W.where_skipped++;
            control_client_send("watch note %s: not watched (--where)", W.where_why);
            continue;
        }
        long n = take_slot(mi, md_token(MD_METHODDEF, row), &described);
        if (n < 0) {
            warn_later(w, "watch: %s is not watched: the agent has watched %d different methods "
                          "in this process, all it keeps", name, WATCH_MAX_METHODS);
            continue;
        }
        W.chosen++;
        if (found < WATCH_MAX_METHODS)
            taken[found] = (uint32_t)n;
        const char *ret = watch_methods[n].ret.type;
        if (!strcmp(ret, "Task") || !strcmp(ret, "ValueTask"))
            control_client_send("watch note %s returns a %s: its line ends at the method's first "
                                "await that waits (its result is the %s, its time the call's "
                                "synchronous part), not when the operation completes",
                                watch_methods[n].display, ret, ret);
        found++;
    }
    /* a name with overloads: all are watched, and said */
    for (uint32_t i = 0; i < found && i < WATCH_MAX_METHODS; i++) {
        const char *d = watch_methods[taken[i]].display;
        uint32_t same = 0, first = i;
        for (uint32_t j = 0; j < found && j < WATCH_MAX_METHODS; j++)
            if (!strcmp(watch_methods[taken[j]].display, d)) {
                same++;
                if (j < first)
                    first = j;
            }
        if (same <= 1 || first != i)
            continue;
        char sigs[700] = "";
        size_t o = 0;
        for (uint32_t j = 0; j < found && j < WATCH_MAX_METHODS && o < sizeof sigs; j++) {
            if (strcmp(watch_methods[taken[j]].display, d))
                continue;
            char one[200];
            watch_signature_text(a, W.methods[taken[j]].token & 0xffffff, one, sizeof one);
            o += (size_t)snprintf(sigs + o, sizeof sigs - o, "%s%s", o ? ", " : "", one);
        }
        control_client_send("watch overloads %u %s %s", same, d, sigs);
    }
    return found;
}

static void module_loaded(ModuleID id)
{
    uint32_t known = atomic_load_explicit(&W.module_count, memory_order_acquire);
    for (uint32_t i = 0; i < known; i++)
        if (W.modules[i]->id == id)
            return; /* an earlier session's: matched at this one's start */
    char path[PATH_MAX];
    if (names_module_file(W.info, id, path, sizeof path) < 0)
        return;
    watch_values_module_dir(path); /* where other assemblies' enums are read from */
    if (strstr(path, "/System.Private.CoreLib.dll"))
        W.corelib = id;
    int framework = strstr(path, "/shared/Microsoft.") != NULL;
    if (framework && !W.framework_too)
        return;
    struct wmodule *wm = mem_calloc(1, sizeof *wm);
    char why[256];
    if (!wm)
        return;
    if (assembly_open(&wm->a, path, why, sizeof why) < 0) {
        log_debug("watch: %s: %s", path, why);
        mem_free(wm);
        return;
    }
    wm->id = id;
    wm->framework = framework;
    pthread_mutex_lock(&W.lock);
    uint32_t mi = atomic_load(&W.module_count);
    if (mi >= MAX_MODULES) {
        pthread_mutex_unlock(&W.lock);
        assembly_close(&wm->a);
        mem_free(wm);
        return;
    }
    W.modules[mi] = wm;
    atomic_store_explicit(&W.module_count, mi + 1, memory_order_release);
    int was_too_many = W.too_many;
    struct warnings warnings = {0};
    uint32_t found = match_module(mi, &warnings);
    int now_too_many = W.too_many && !was_too_many;
    pthread_mutex_unlock(&W.lock);
    warn_now(&warnings);
    if (found)
        log_debug("watch: %s: %u methods", path, found);
    if (now_too_many)
        control_client_send("watch too-many %u %u", W.matched_total, W.max_methods);
}


const struct assembly *watch_assembly_of(ModuleID module)
{
    uint32_t n = atomic_load_explicit(&W.module_count, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++)
        if (W.modules[i]->id == module)
            return &W.modules[i]->a;
    return NULL;
}

/* --fields: the layouts of the classes a method's values are declared
 * with, learnt before its first call (so that its string fields are
 * taken from the first call on). */
static void learn_layouts(const struct watch_method *m, ModuleID module)
{
    const struct watch_value *values[WATCH_ARGS + 2];
    uint32_t n = 0;
    if (m->has_this)
        values[n++] = &m->self;
    for (uint32_t i = 0; i < m->taken; i++)
        values[n++] = &m->args[i];
    values[n++] = &m->ret;
    for (uint32_t i = 0; i < n; i++)
        if (values[i]->read == WATCH_READ_OBJECT && values[i]->type_token)
            watch_layout_learn(W.info, module, values[i]->type_token);
}

static int rewrite_method(uint32_t index, struct il_rewritten *out, char *why, size_t why_size)
{
    struct wmethod *wmth = &W.methods[index];
    struct wmodule *wm = W.modules[wmth->module];
    if (W.fields)
        learn_layouts(&watch_methods[index], wm->id);
    if (watch_methods[index].handles && watch_generic_learn(W.info, W.corelib) < 0)
        log_debug("watch: the runtime's RuntimeType layout was not found: values of T not read");
    return watch_rewrite(W.info, wm->id, &wm->a, wm->sigs, wmth->token, index, W.attached, out, why,
                         why_size);
}

static void left_alone(uint32_t index, const char *why)
{
    atomic_store(&W.methods[index].state, M_LEFT);
    atomic_fetch_add(&W.left, 1);
    log_warn("watch: %s is not watched: %s", watch_methods[index].display, why);
}

/* Launched: the method's first compilation. */
static long find_method(ModuleID module, mdToken token)
{
    uint32_t n = atomic_load_explicit(&W.method_count, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++)
        if (W.methods[i].token == token && atomic_load(&W.methods[i].session) == W.session &&
            W.modules[W.methods[i].module]->id == module)
            return (long)i;
    return -1;
}

/* The watched method a function is (its index), or -1. */
static long watched(FunctionID f, ModuleID *module_out, mdToken *token_out)
{
    ClassID klass;
    ModuleID module;
    mdToken token;
    if (!f || W.info->lpVtbl->GetFunctionInfo(W.info, f, &klass, &module, &token) < 0)
        return -1;
    if (module_out)
        *module_out = module;
    if (token_out)
        *token_out = token;
    return find_method(module, token);
}

static void jit_started(struct source *s, FunctionID f, int dynamic)
{
    (void)s;
    /* past --max-methods nothing is rewritten (corscope says so): the
     * methods taken before the count was passed are left as they are */
    if (dynamic || W.attached || W.too_many)
        return;
    ModuleID module;
    mdToken token;
    long i = watched(f, &module, &token);
    if (i < 0)
        return;
    int st = M_UNKNOWN;
    if (!atomic_compare_exchange_strong(&W.methods[i].state, &st, M_BUSY))
        return; /* done: every later compilation reads the new IL (or another instantiation
                 * is at it: one compilation of that instantiation may miss its probes) */
    char why[256];
    struct il_rewritten out;
    if (rewrite_method((uint32_t)i, &out, why, sizeof why) < 0) {
        left_alone((uint32_t)i, why);
        return;
    }
    int installed = il_install(W.info, module, token, 0, &out, why, sizeof why);
    il_rewritten_free(&out);
    if (installed < 0) {
        left_alone((uint32_t)i, why);
        return;
    }
    atomic_store(&W.methods[i].state, M_DONE);
    atomic_fetch_add(&W.rewritten, 1);
}

static void jit_inlining(struct source *s, FunctionID caller, FunctionID callee, BOOL *should_inline)
{
    (void)s;
    (void)caller;
    if (!W.attached && watched(callee, NULL, NULL) >= 0)
        *should_inline = FALSE;
}

static void r2r_lookup(struct source *s, FunctionID f, BOOL *use_cached)
{
    (void)s;
    if (watched(f, NULL, NULL) >= 0)
        *use_cached = FALSE;
}

/* Attached: GetReJITParameters of a method asked for.  A method that is
 * not one of ours is said to be another source's (a failure return); one
 * of ours is answered (S_OK) even when left alone, so that no other source
 * gives it a body. */
static HRESULT rejit_parameters(struct source *s, ModuleID module, mdMethodDef method,
                                ICorProfilerFunctionControl *control)
{
    (void)s;
    long i = find_method(module, method);
    if (i < 0)
        return E_FAIL;
    char why[256];
    struct il_rewritten out;
    if (rewrite_method((uint32_t)i, &out, why, sizeof why) < 0) {
        left_alone((uint32_t)i, why);
        return S_OK;
    }
    HRESULT hr = control->lpVtbl->SetILFunctionBody(control, (ULONG)out.size, out.body);
    il_rewritten_free(&out);
    if (hr < 0) {
        snprintf(why, sizeof why, "the runtime refused the new body (0x%08x)", (unsigned)hr);
        left_alone((uint32_t)i, why);
        return S_OK;
    }
    int st = M_UNKNOWN;
    if (atomic_compare_exchange_strong(&W.methods[i].state, &st, M_DONE))
        atomic_fetch_add(&W.rewritten, 1);
    return S_OK;
}

static void rejit_error(struct source *s, ModuleID module, mdMethodDef method, HRESULT status)
{
    (void)s;
    long i = find_method(module, method);
    if (i >= 0) {
        char why[64];
        snprintf(why, sizeof why, "ReJIT failed (0x%08x)", (unsigned)status);
        left_alone((uint32_t)i, why);
    }
}

/* Throws: the class of the exception the thread threw last (in its
 * agent_thread block), and each watched frame it unwinds (the call ends by
 * the throw). */

static void exception(struct source *s, enum source_exception_step step, FunctionID function,
                      ObjectID object)
{
    (void)s;
    if (step == SOURCE_EX_THROWN) {
        ClassID k = 0;
        if (object && W.info->lpVtbl->GetClassFromObject(W.info, object, &k) < 0)
            k = 0;
        struct agent_thread *t = agent_thread_get();
        if (t)
            t->watch.thrown_class = k;
        watch_throw_seen(W.info, object, k);
        return;
    }
    if (step != SOURCE_EX_UNWIND_ENTER)
        return;
    long i = watched(function, NULL, NULL);
    if (i >= 0) {
        struct agent_thread *t = agent_thread_get();
        watch_thrown((uint32_t)i, t ? t->watch.thrown_class : 0);
    }
}

static void load(struct source *s, enum source_load_kind kind, int finished, uintptr_t id,
                 HRESULT status)
{
    (void)s;
    if (!W.attached && kind == SOURCE_LOAD_MODULE && finished && status >= 0)
        module_loaded((ModuleID)id);
}


/* Tells corscope that nothing matched, with the nearest method names. */
static void say_none(void)
{
    if (W.where_skipped) {
        control_client_send("watch bad-where %s", W.where_why);
        return;
    }
    static const struct assembly *assemblies[MAX_MODULES];
    uint32_t n = atomic_load(&W.module_count);
    for (uint32_t i = 0; i < n; i++)
        assemblies[i] = &W.modules[i]->a;
    char text[900];
    if (W.by_signature && W.other_overloads[0]) {
        control_client_send("watch nosig %s", W.other_overloads);
        return;
    }
    watch_near_names(W.pattern, assemblies, n, text, sizeof text);
    control_client_send("watch none %s", text[0] ? text : "-");
}

/* ---- the loop ------------------------------------------------------------------------ */

/* Sends what waits in the outbox, as much as the socket takes now. */
static void flush_outbox(void)
{
    while (W.outbox_count) {
        int rc = control_client_try_send(W.outbox[W.outbox_head], W.outbox_len[W.outbox_head]);
        if (rc < 0)
            return; /* full: corscope reads it, the next cycle tries again */
        if (rc > 0)
            W.unsent++;
        W.outbox_head = (W.outbox_head + 1) % OUTBOX;
        W.outbox_count--;
    }
}

/* Queues one message for corscope.  Returns 0, or -1 when the outbox is
 * full (corscope is not reading: bounded, counted as not sent). */
static int outbox_add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int outbox_add(const char *fmt, ...)
{
    flush_outbox();
    if (W.outbox_count == OUTBOX) {
        W.unsent++;
        return -1;
    }
    uint32_t slot = (W.outbox_head + W.outbox_count) % OUTBOX;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(W.outbox[slot], CONTROL_MESSAGE_MAX, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    W.outbox_len[slot] = (uint16_t)(n < CONTROL_MESSAGE_MAX ? n : CONTROL_MESSAGE_MAX - 1);
    W.outbox_count++;
    flush_outbox();
    return 0;
}

static void send_call(pid_t tid, uint64_t start, uint64_t duration, const char *text)
{
    W.calls++;
    outbox_add("call %d %llu %llu %s", (int)tid, (unsigned long long)start,
               (unsigned long long)duration, text);
}

/* --stack: the callers of a call, one "watch frame" message each after its
 * line, outermost last.  The walk starts in the probe (native, ours), then
 * the watched method: both left out.  Native frames between managed ones
 * are one "[native code]". */
static void send_stack(const struct pending *p)
{
    int seen_method = 0, native_run = 0;
    for (uint32_t i = 0; i < p->depth; i++) {
        /* a return address points after its call: look up the call */
        uintptr_t ip = (uintptr_t)p->ips[i] - (i ? 1 : 0);
        FunctionID f = 0;
        if (W.info->lpVtbl->GetFunctionFromIP(W.info, (LPCBYTE)ip, &f) < 0)
            f = 0;
        if (!seen_method) {
            seen_method = f != 0;
            continue;
        }
        if (!f) {
            native_run = 1;
            continue;
        }
        if (native_run && outbox_add("watch frame [native code]") < 0)
            return;
        native_run = 0;
        struct method_desc d;
        if (names_describe(W.info, W.info_version, f, &d) < 0) {
            if (outbox_add("watch frame [a method the runtime did not name]") < 0)
                return;
            continue;
        }
        if (outbox_add("watch frame %.300s.%.200s", d.type, d.method) < 0)
            return;
    }
    if (native_run)
        outbox_add("watch frame [native code]");
}

static HRESULT request_rejit(void);

static uint64_t cycle(struct agent *a, struct source *s, uint64_t now)
{
    (void)a;
    (void)s;
    flush_outbox();
    for (int k = 0; k < 2; k++)
        if (W.again_at[k] && now >= W.again_at[k]) {
            W.again_at[k] = 0;
            if (W.chosen && atomic_load(&watch_probe.active) && !W.reverted) {
                HRESULT hr = request_rejit();
                log_debug("watch: ReJIT asked again (0x%08x)", (unsigned)hr);
            }
        }
    return W.outbox_count ? now + 2000000 : 0;
}

/* --fields: an object's or struct's fields as the record's last part
 * (US, then name=value items joined by RS), "" when none. */
static void format_fields(const struct watch_value *v, const struct watch_decoded *d,
                          uint32_t method, char *out, size_t size)
{
    out[0] = '\0';
    if (d->read != WATCH_READ_OBJECT && d->read != WATCH_READ_STRUCT)
        return;
    out[0] = '\x1f';
    watch_format_fields(W.info, v, d, W.modules[W.methods[method].module]->id, out + 1, size - 1);
    if (!out[1])
        out[0] = '\0';
}

static void on_enter(const struct evq_entry *e, uint32_t method, uint32_t count)
{
    const struct watch_method *m = &watch_methods[method];
    if (W.pending_count == MAX_PENDING) {
        memmove(&W.pending[0], &W.pending[1], (MAX_PENDING - 1) * sizeof W.pending[0]);
        W.pending_count--;
        W.unfinished++;
    }
    struct pending *p = &W.pending[W.pending_count++];
    p->tid = e->tid;
    p->method = method;
    p->token = e->payload[1];
    p->depth = e->depth < STACK_FRAMES ? e->depth : STACK_FRAMES;
    if (p->depth)
        memcpy(p->ips, e->ips, p->depth * sizeof p->ips[0]);
    /* the call message's records (cli/watch_call.h): the method, then
     * "a US name US type US value" per argument */
    size_t o = (size_t)snprintf(p->text, sizeof p->text, "%s", m->display);
    uint32_t pos = 2;
    uint32_t first = m->has_this ? 0 : 1; /* value 0 is `this`'s */
    for (uint32_t i = first; i < count + first && i <= m->taken; i++) {
        const struct watch_value *v = i ? &m->args[i - 1] : &m->self;
        struct watch_decoded d;
        char value[200];
        if (watch_decode_value(e->payload, e->words, &pos, &d) < 0)
            break;
        watch_resolve(W.info, &d);
        const struct watch_value *as = d.has_plan ? &d.plan : v; /* T: its instantiation */
        watch_format_value(as, &d, value, sizeof value);
        char fields[400];
        format_fields(v, &d, p->method, fields, sizeof fields);
        if (o < sizeof p->text)
            o += (size_t)snprintf(p->text + o, sizeof p->text - o, "\ta\x1f%s\x1f%s\x1f%s%s",
                                  v->name, watch_type_shown(as, &d), value, fields);
    }
    if (m->params > m->taken && o < sizeof p->text)
        snprintf(p->text + o, sizeof p->text - o, "\tm");
}

static void on_exit_entry(const struct evq_entry *e, uint32_t method)
{
    uint64_t token = e->payload[1];
    for (uint32_t k = W.pending_count; k-- > 0;) {
        struct pending *p = &W.pending[k];
        if (p->tid != e->tid || p->token != token || p->method != method)
            continue;
        const struct watch_method *m = &watch_methods[method];
        char line[1000];
        size_t o = (size_t)snprintf(line, sizeof line, "%s", p->text);
        if (m->ret.kind != SIG_VOID && o < sizeof line) {
            uint32_t pos = 2;
            struct watch_decoded d;
            char value[200];
            if (watch_decode_value(e->payload, e->words, &pos, &d) == 0) {
                watch_resolve(W.info, &d);
                const struct watch_value *as = d.has_plan ? &d.plan : &m->ret;
                watch_format_value(as, &d, value, sizeof value);
                char fields[400];
                format_fields(&m->ret, &d, method, fields, sizeof fields);
                snprintf(line + o, sizeof line - o, "\tr\x1f%s\x1f%s%s",
                         watch_type_shown(as, &d), value, fields);
            }
        }
        send_call(e->tid, token, e->time > token ? e->time - token : 0, line);
        send_stack(p);
        /* the same thread's later entries never returned (they threw) */
        uint32_t kept = 0;
        for (uint32_t j = 0; j < W.pending_count; j++) {
            if (j == k)
                continue;
            if (j > k && W.pending[j].tid == e->tid) {
                W.unfinished++;
                continue;
            }
            if (kept != j)
                W.pending[kept] = W.pending[j];
            kept++;
        }
        W.pending_count = kept;
        return;
    }
    W.unpaired++;
}

/* A watched call of this thread ended by a throw: its line, with the
 * exception's class. */
static void on_throw(const struct evq_entry *e, uint32_t method)
{
    for (uint32_t k = W.pending_count; k-- > 0;) {
        struct pending *p = &W.pending[k];
        if (p->tid != e->tid || p->method != method)
            continue;
        char name[256] = "an exception";
        if (e->payload[1])
            names_describe_class(W.info, (ClassID)e->payload[1], name, sizeof name);
        /* the message, when the exception had one (": null" when its
         * _message was null: the runtime's default text is made by code) */
        char message[200] = "";
        uint32_t pos = 2;
        struct watch_decoded d;
        if (e->words > 2 && watch_decode_value(e->payload, e->words, &pos, &d) == 0 &&
            d.read == WATCH_READ_STRING)
            watch_format_string(&d, message, sizeof message);
        char line[1000];
        snprintf(line, sizeof line, "%.600s\tt\x1f%.200s\x1f%s", p->text, name, message);
        send_call(e->tid, p->token, e->time > p->token ? e->time - p->token : 0, line);
        send_stack(p);
        W.throws++;
        memmove(&W.pending[k], &W.pending[k + 1], (W.pending_count - k - 1) * sizeof W.pending[0]);
        W.pending_count--;
        return;
    }
}

/* A call --where left out on its result: its entry is forgotten. */
static void on_drop(const struct evq_entry *e, uint32_t method)
{
    for (uint32_t k = W.pending_count; k-- > 0;) {
        struct pending *p = &W.pending[k];
        if (p->tid != e->tid || p->token != e->payload[1] || p->method != method)
            continue;
        memmove(&W.pending[k], &W.pending[k + 1], (W.pending_count - k - 1) * sizeof W.pending[0]);
        W.pending_count--;
        return;
    }
}

static void entry(struct agent *a, struct source *s, const struct evq_entry *e)
{
    (void)a;
    (void)s;
    if (e->words < 2)
        return;
    uint32_t method = (uint32_t)e->payload[0];
    uint32_t count = (uint32_t)(e->payload[0] >> 32);
    /* a frame still in code of an earlier session's can call a probe */
    if (method >= atomic_load(&W.method_count) ||
        atomic_load(&W.methods[method].session) != W.session)
        return;
    if (e->kind == WATCH_ENTRY_ENTER)
        on_enter(e, method, count);
    else if (e->kind == WATCH_ENTRY_EXIT)
        on_exit_entry(e, method);
    else if (e->kind == WATCH_ENTRY_THROW)
        on_throw(e, method);
    else if (e->kind == WATCH_ENTRY_DROP)
        on_drop(e, method);
}

/* This session's methods, as the runtime names them.  Returns how many. */
static uint32_t session_methods(ModuleID *mods, mdMethodDef *toks)
{
    uint32_t n = atomic_load(&W.method_count), k = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (atomic_load(&W.methods[i].session) != W.session)
            continue;
        mods[k] = W.modules[W.methods[i].module]->id;
        toks[k++] = W.methods[i].token;
    }
    return k;
}

/* Asks the runtime to rejit this session's methods and the methods that
 * inlined them. */
static HRESULT request_rejit(void)
{
    static ModuleID mods[WATCH_MAX_METHODS];
    static mdMethodDef toks[WATCH_MAX_METHODS];
    uint32_t n = session_methods(mods, toks);
    return W.info->lpVtbl->RequestReJITWithInliners(W.info, COR_PRF_REJIT_BLOCK_INLINING, n, mods,
                                                    toks);
}

/* Attached: the methods of the modules loaded now, rejitted. */
static int start(struct agent *a, struct source *s)
{
    (void)a;
    (void)s;
    if (!W.attached)
        return 0;
    /* the modules an earlier session read, under the new pattern */
    pthread_mutex_lock(&W.lock);
    uint32_t known = atomic_load(&W.module_count);
    struct warnings warnings = {0};
    for (uint32_t mi = 0; mi < known; mi++)
        match_module(mi, &warnings);
    pthread_mutex_unlock(&W.lock);
    warn_now(&warnings);
    if (W.too_many)
        control_client_send("watch too-many %u %u", W.matched_total, W.max_methods);
    ICorProfilerModuleEnum *modules = NULL;
    if (W.info->lpVtbl->EnumModules(W.info, &modules) >= 0 && modules) {
        ModuleID ids[64];
        ULONG got = 0;
        while (modules->lpVtbl->Next(modules, 64, ids, &got) >= 0 && got)
            for (ULONG i = 0; i < got; i++)
                module_loaded(ids[i]);
        modules->lpVtbl->Release(modules);
    }
    uint32_t n = W.chosen;
    if (W.too_many)
        return 0; /* said (above, or module_loaded) */
    if (!n) {
        say_none();
        return 0;
    }
    HRESULT hr = request_rejit();
    if (hr < 0) {
        log_warn("watch: the runtime refused to rejit the methods (0x%08x)", (unsigned)hr);
        control_client_send("watch failed rejit 0x%08x", (unsigned)hr);
        return 0;
    }
    control_client_send("watch methods %u", n);
    /* a caller being compiled (tier 1) while the request is made can be
     * installed with the original method inlined, after the runtime
     * looked for inliners: ask again a little later (seen on .NET 10: a
     * service attached to as it tiered up showed no call) */
    uint64_t now = clock_now_ns();
    W.again_at[0] = now + 1000000000ull;
    W.again_at[1] = now + 3000000000ull;
    return 0;
}

static void stop(struct agent *a, struct source *s)
{
    (void)a;
    (void)s;
    atomic_store(&watch_probe.active, 0);
    W.again_at[0] = W.again_at[1] = 0;
    if (W.attached && W.chosen && !W.too_many && !W.reverted) {
        static ModuleID mods[WATCH_MAX_METHODS];
        static mdMethodDef toks[WATCH_MAX_METHODS];
        uint32_t n = session_methods(mods, toks);
        HRESULT hr = W.info->lpVtbl->RequestRevert(W.info, n, mods, toks, NULL);
        if (hr < 0)
            log_warn("watch: RequestRevert failed (0x%08x); the probes stay, quiet", (unsigned)hr);
        W.reverted = 1;
    }
    watch_probe_quiesce();
}

static void finish(struct agent *a, struct source *s)
{
    (void)a;
    (void)s;
    if (!W.attached && !W.too_many && !W.chosen)
        say_none();
    W.unfinished += W.pending_count;
    W.pending_count = 0;
    for (int i = 0; i < 500 && W.outbox_count; i++) { /* at most 1 s for corscope to read */
        flush_outbox();
        if (W.outbox_count) {
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
        }
    }
    W.unsent += W.outbox_count;
    W.outbox_count = 0;
    for (int i = 0; i < 100; i++) { /* the last word must arrive */
        char end[256];
        int n = snprintf(end, sizeof end, "watch end %llu %llu %llu %llu %llu %llu %llu %llu %llu",
                         (unsigned long long)W.calls, (unsigned long long)W.unfinished,
                         (unsigned long long)atomic_load(&watch_probe.over_count),
                         (unsigned long long)atomic_load(&watch_probe.over_rate),
                         (unsigned long long)atomic_load(&watch_probe.queue_full),
                         (unsigned long long)atomic_load(&W.rewritten),
                         (unsigned long long)atomic_load(&W.left), (unsigned long long)W.unsent,
                         (unsigned long long)atomic_load(&watch_probe.filtered));
        if (control_client_try_send(end, (size_t)n) != -1)
            break;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    log_info("watch: %llu calls, %llu methods rewritten, %llu left", (unsigned long long)W.calls,
             (unsigned long long)atomic_load(&W.rewritten), (unsigned long long)atomic_load(&W.left));
}

static const struct source_hooks hooks = {
    .jit_started = jit_started,
    .jit_inlining = jit_inlining,
    .r2r_lookup = r2r_lookup,
    .load = load,
    .exception = exception,
    .rejit_parameters = rejit_parameters,
    .rejit_error = rejit_error,
};

/* Forgets the last session (its methods reverted, its probes quiet). */
static void new_session(void)
{
    W.chosen = 0;
    W.other_overloads[0] = '\0';
    W.too_many = 0;
    W.matched_total = 0;
    atomic_store(&W.rewritten, 0);
    atomic_store(&W.left, 0);
    W.pending_count = 0;
    W.calls = W.unfinished = W.unpaired = W.unsent = W.throws = 0;
    W.reverted = 0;
    W.outbox_head = W.outbox_count = 0;
    W.again_at[0] = W.again_at[1] = 0;
    atomic_store(&watch_probe.taken, 0);
    atomic_store(&watch_probe.over_count, 0);
    atomic_store(&watch_probe.over_rate, 0);
    atomic_store(&watch_probe.queue_full, 0);
    atomic_store(&watch_probe.filtered, 0);
    W.where_skipped = 0;
    W.where_why[0] = '\0';
    atomic_store(&watch_probe.window, 0);
    atomic_store(&watch_probe.window_taken, 0);
}

static int watch_init(struct agent *a, struct source *s, DWORD *mask, DWORD *high)
{
    (void)high;
    if (W.info) {
        /* a session after another, in the agent that stayed loaded
         * (lifecycle_resume): what was read of the modules and the
         * probes' table stay; the rest starts again */
        if (!W.attached || !a->attached) {
            log_error("watch: a second session only after an attach");
            return -1;
        }
        new_session();
    } else {
        /* rewritten code calls into this library until the process ends (a
         * frame inside an old version after the revert): it is never unloaded */
        Dl_info self;
        if (!dladdr((void *)&watch_enter, &self) || !self.dli_fname ||
            !dlopen(self.dli_fname, RTLD_NOW | RTLD_NODELETE)) {
            log_error("watch: cannot pin the agent's library in memory; not watching");
            return -1;
        }
        pthread_mutex_init(&W.lock, NULL);
    }
    W.session++;
    W.info = a->info;
    W.info_version = a->info_version;
    W.attached = a->attached;
    snprintf(W.pattern, sizeof W.pattern, "%s", a->cfg.watch);
    /* 'Name(types)': one overload by its parameters */
    char *open = strchr(W.pattern, '(');
    W.by_signature = open != NULL;
    W.params[0] = '\0';
    if (open) {
        snprintf(W.params, sizeof W.params, "%s", open + 1);
        W.params[strcspn(W.params, ")")] = '\0';
        *open = '\0';
    }
    W.framework_too = !strncmp(W.pattern, "System.", 7) || !strncmp(W.pattern, "Microsoft.", 10);
    W.max_methods = a->cfg.watch_methods ? a->cfg.watch_methods : CONFIG_WATCH_METHODS_DEFAULT;
    if (W.max_methods > WATCH_MAX_METHODS)
        W.max_methods = WATCH_MAX_METHODS;
    W.where_set = 0;
    if (a->cfg.watch_where[0]) {
        char why[160];
        if (watch_where_parse(a->cfg.watch_where, &W.where, why, sizeof why) < 0) {
            log_error("watch: --where '%s': %s", a->cfg.watch_where, why);
            return -1;
        }
        W.where_set = 1;
    }
    watch_probe.source = s->index;
    watch_probe.count_limit = a->cfg.watch_count;
    watch_probe.rate = a->cfg.watch_rate ? a->cfg.watch_rate : CONFIG_WATCH_RATE_DEFAULT;
    watch_probe.stack_depth = a->cfg.watch_stack;
    W.fields = a->cfg.watch_fields;
    atomic_store(&watch_probe.active, 1);
    *mask |= COR_PRF_MONITOR_EXCEPTIONS; /* calls that end by a throw */
    if (W.attached)
        *mask |= COR_PRF_ENABLE_REJIT;
    else
        *mask |= COR_PRF_MONITOR_JIT_COMPILATION | COR_PRF_MONITOR_MODULE_LOADS |
                 COR_PRF_MONITOR_CACHE_SEARCHES;
    s->state = &W;
    return 0;
}

const struct source_ops source_watch = {
    .name = "watch",
    .init = watch_init,
    .start = start,
    .cycle = cycle,
    .entry = entry,
    .stop = stop,
    .finish = finish,
    .hooks = &hooks,
};
