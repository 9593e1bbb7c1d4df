/*
 * Tests of the agent's start (lifecycle.c) against the runtime's version:
 * it asks the runtime only for what that version has:
 *   - every ICorProfilerInfo method the agent's sources call, whose
 *     interface is later than AGENT_INFO_MIN, is called from a function
 *     that checks info_version for it (or says "needs ICorProfilerInfoN",
 *     its callers checking): read from src/agent/, against the version
 *     each method has in clr_interfaces.h;
 *   - a runtime below AGENT_INFO_MIN (a fake one, answering QueryInterface
 *     up to ICorProfilerInfo10 with a vtable of that length) gets one
 *     `corscope:` line, Initialize fails (the runtime then runs the program
 *     without the profiler), and no slot past the fake's is touched.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/profiler.h"
#include "clr/clr_guids.h"
#include "test.h"

/* ---- every call within its version --------------------------------------- */

#define METHOD_ENTRY(ver, ret, name, params) {#name, ver},
static const struct {
    const char *name;
    int version;
} info_methods[] = {CLR_INFO_METHODS(METHOD_ENTRY, ICorProfilerInfo15)};

static int method_version(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof info_methods / sizeof info_methods[0]; i++)
        if (strlen(info_methods[i].name) == len && !strncmp(info_methods[i].name, name, len))
            return info_methods[i].version;
    return -1;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (text && fread(text, 1, (size_t)n, f) != (size_t)n) {
        free(text);
        text = NULL;
    }
    if (text)
        text[n] = '\0';
    fclose(f);
    return text;
}

/* Does [from, to) hold a check good for a method of version v: the text
 * "info_version >= N", "info_version < N" or "needs ICorProfilerInfoN",
 * N >= v? */
static int guarded(const char *from, const char *to, int v)
{
    static const char *const forms[] = {"info_version >= ", "info_version < ",
                                        "needs ICorProfilerInfo"};
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
        size_t len = strlen(forms[f]);
        for (const char *p = from; p && p < to; p++) {
            p = strstr(p, forms[f]);
            if (!p || p >= to)
                break;
            const char *num = p + len;
            /* "info_version >= AGENT_INFO_MIN" and the like are no check */
            if (*num >= '0' && *num <= '9' && atoi(num) >= v)
                return 1;
        }
    }
    return 0;
}

struct lint {
    int calls_seen;     /* calls of methods later than AGENT_INFO_MIN */
    int eventpipe_seen; /* the known ones: a lint that finds none is broken */
    int handle_seen;
    int suspensions_seen; /* SuspendRuntime .. ResumeRuntime spans */
    int suspensions;      /* this lint, not the versions' */
    int locked_seen;      /* pthread_mutex_lock .. unlock spans */
    int locks;            /* the lint of log lines under a lock */
};

/* The function around `at`: from its first line (starting in column 0
 * with a letter) to the closing brace in column 0. */
static void function_around(const char *text, const char *at, const char **begin,
                            const char **end)
{
    const char *b = at;
    while (b > text) {
        const char *line = b;
        while (line > text && line[-1] != '\n')
            line--;
        if ((line[0] >= 'a' && line[0] <= 'z') || (line[0] >= 'A' && line[0] <= 'Z')) {
            b = line;
            break;
        }
        b = line > text ? line - 1 : text;
    }
    *begin = b;
    const char *e = strstr(at, "\n}");
    *end = e ? e : at + strlen(at);
}

/* Nothing is written while the runtime is suspended: from a suspension
 * (a call of SuspendRuntime or of a suspend() helper) to the ResumeRuntime
 * after it in the same function, no log_, control_client_, write( or
 * printf -- a write to a pipe that only a managed thread of the process
 * drains would never end, and the runtime would stay suspended
 * (docs/locks.md). */
static void lint_suspensions(const char *path, const char *text, struct lint *l)
{
    static const char *const writes[] = {"log_", "control_client_", "write(", "printf("};
    for (const char *p = text; (p = strstr(p, "ResumeRuntime(")) != NULL; p += 14) {
        const char *begin, *end, *from = NULL;
        function_around(text, p, &begin, &end);
        for (const char *q = begin; q < p; q++)
            if (!strncmp(q, "SuspendRuntime(", 15) || !strncmp(q, "suspend(", 8))
                from = q;
        if (!from)
            continue;
        l->suspensions_seen++;
        for (const char *q = from; q < p; q++) {
            for (size_t w = 0; w < sizeof writes / sizeof writes[0]; w++) {
                if (strncmp(q, writes[w], strlen(writes[w])))
                    continue;
                int line = 1;
                for (const char *c = text; c < q; c++)
                    line += *c == '\n';
                char what[1200];
                snprintf(what, sizeof what, "%.1024s:%d writes (%s) while the runtime is suspended",
                         path, line, writes[w]);
                test_fail(__FILE__, __LINE__, what);
            }
        }
    }
}

/* A static function's body in text, or NULL: the line that starts with
 * "static" and names it, to its closing brace in column 0. */
static const char *static_body(const char *text, const char *name, size_t len, const char **end)
{
    for (const char *p = text; (p = strstr(p, "\nstatic ")) != NULL; p += 8) {
        const char *eol = strchr(p + 1, '\n');
        const char *paren = strchr(p + 1, '(');
        if (!eol || !paren || paren > eol || (size_t)(paren - p) < len ||
            strncmp(paren - len, name, len) || !strchr(" *", paren[-(long)len - 1]))
            continue;
        const char *brace = strstr(paren, "\n{");
        const char *semi = strchr(paren, ';');
        if (!brace || (semi && semi < brace))
            continue; /* a declaration */
        *end = strstr(brace, "\n}");
        return *end ? brace : NULL;
    }
    return NULL;
}

/* No log line while an agent lock is held: from pthread_mutex_lock( to
 * the pthread_mutex_unlock( after it in the same function, and in the
 * bodies of the file's static functions called there (one level), no
 * log_ call -- a log line is a blocking write to stderr, and every other
 * thread that needs the lock (a module load, a compilation) waits on it
 * (docs/locks.md). */
static void lint_locks(const char *path, const char *text, struct lint *l)
{
    for (const char *p = text; (p = strstr(p, "pthread_mutex_unlock(")) != NULL; p += 21) {
        const char *begin, *end, *from = NULL;
        function_around(text, p, &begin, &end);
        for (const char *q = begin; q < p; q++)
            if (!strncmp(q, "pthread_mutex_lock(", 19))
                from = q; /* the last before it (an unlock between is an early return's) */
        if (!from)
            continue;
        l->locked_seen++;
        for (const char *q = from; q < p; q++) {
            const char *where = NULL;
            if (!strncmp(q, "log_", 4) && (q == text || !strchr("_abcdefghijklmnopqrstuvwxyz", q[-1])))
                where = q;
            else if (q > from && (*q == '(') && strchr("abcdefghijklmnopqrstuvwxyz_0123456789", q[-1])) {
                const char *n = q;
                while (n > from && strchr("abcdefghijklmnopqrstuvwxyz_0123456789", n[-1]))
                    n--;
                const char *body_end, *body = static_body(text, n, (size_t)(q - n), &body_end);
                for (const char *b = body; b && b < body_end; b++)
                    if (!strncmp(b, "log_", 4) && !strchr("_abcdefghijklmnopqrstuvwxyz", b[-1])) {
                        where = q;
                        break;
                    }
            }
            if (!where)
                continue;
            int line = 1;
            for (const char *c = text; c < where; c++)
                line += *c == '\n';
            char what[1200];
            snprintf(what, sizeof what, "%.1024s:%d writes a log line while a lock is held", path,
                     line);
            test_fail(__FILE__, __LINE__, what);
        }
    }
}

static void lint_file(const char *path, struct lint *l)
{
    char *text = read_text(path);
    if (!text) {
        test_fail(__FILE__, __LINE__, path);
        return;
    }
    if (l->locks) {
        lint_locks(path, text, l);
        free(text);
        return;
    }
    if (l->suspensions) {
        lint_suspensions(path, text, l);
        free(text);
        return;
    }
    const char *first_include = strstr(text, "#include");
    for (const char *p = text; (p = strstr(p, "lpVtbl->")) != NULL; p += 8) {
        const char *name = p + 8;
        size_t len = 0;
        while ((name[len] >= 'a' && name[len] <= 'z') || (name[len] >= 'A' && name[len] <= 'Z') ||
               (name[len] >= '0' && name[len] <= '9') || name[len] == '_')
            len++;
        int v = method_version(name, len);
        if (v <= AGENT_INFO_MIN)
            continue;
        l->calls_seen++;
        l->eventpipe_seen += !strncmp(name, "EventPipeStartSession", len);
        l->handle_seen += !strncmp(name, "CreateHandle", len);
        const char *begin, *end;
        function_around(text, p, &begin, &end);
        if (guarded(begin, end, v) || (first_include && guarded(text, first_include, v)))
            continue;
        int line = 1;
        for (const char *c = text; c < p; c++)
            line += *c == '\n';
        char what[1400];
        snprintf(what, sizeof what, "%.1024s:%d calls %.*s (ICorProfilerInfo%d) without checking "
                 "info_version", path, line, (int)(len > 64 ? 64 : len), name, v);
        test_fail(__FILE__, __LINE__, what);
    }
    free(text);
}

static void lint_dir(const char *dir, struct lint *l)
{
    DIR *d = opendir(dir);
    if (!d) {
        test_fail(__FILE__, __LINE__, dir);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) < 0)
            continue;
        size_t n = strlen(e->d_name);
        if (S_ISDIR(st.st_mode))
            lint_dir(path, l);
        else if (n > 2 && !strcmp(e->d_name + n - 2, ".c"))
            lint_file(path, l);
    }
    closedir(d);
}

static void test_info_calls_within_version(void)
{
    struct stat st;
    /* make runs the tests from the top of the tree */
    REQUIRE(stat("src/agent/agent.h", &st) == 0);
    struct lint l = {0};
    lint_dir("src/agent", &l);
    CHECK(l.calls_seen >= 4);
    CHECK(l.eventpipe_seen == 1);
    CHECK(l.handle_seen >= 1); /* live.c's, and async_snapshots.c's */
}

static void test_nothing_written_while_suspended(void)
{
    struct lint l = {.suspensions = 1};
    lint_dir("src/agent", &l);
    CHECK(l.suspensions_seen >= 2); /* cpu_suspend.c's, async_snapshots.c's */
}

static void test_no_log_under_a_lock(void)
{
    struct lint l = {.locks = 1};
    lint_dir("src/agent", &l);
    CHECK(l.locked_seen >= 4); /* watch.c's among them */
}

static void test_guard_forms(void)
{
    static const char ok[] = "if (info_version >= 13) x();";
    static const char low[] = "if (info_version >= 12) x();";
    static const char named[] = "/* needs ICorProfilerInfo12: ... */";
    static const char symbolic[] = "if (info_version >= AGENT_INFO_MIN) x();";
    CHECK(guarded(ok, ok + sizeof ok, 13));
    CHECK(!guarded(low, low + sizeof low, 13));
    CHECK(guarded(named, named + sizeof named, 12));
    CHECK(!guarded(named, named + sizeof named, 13));
    CHECK(!guarded(symbolic, symbolic + sizeof symbolic, 12));
}

/* ---- a runtime older than AGENT_INFO_MIN --------------------------------- */

static int fake_refs;

static HRESULT STDMETHODCALLTYPE fake_info_qi(ICorProfilerInfo15 *self, REFIID iid, void **out)
{
    (void)self;
    (void)iid;
    *out = NULL;
    return E_NOINTERFACE;
}
static ULONG STDMETHODCALLTYPE fake_info_addref(ICorProfilerInfo15 *self)
{
    (void)self;
    return (ULONG)++fake_refs;
}
static ULONG STDMETHODCALLTYPE fake_info_release(ICorProfilerInfo15 *self)
{
    (void)self;
    return (ULONG)--fake_refs;
}

/* Every slot NULL but IUnknown's: a call of any other crashes the test,
 * which is what it should (a runtime of version 10 has no slot past
 * Info10's, and the agent must not need one before it declines). */
static union {
    ICorProfilerInfo15Vtbl vtbl;
    void *slots[sizeof(ICorProfilerInfo15Vtbl) / sizeof(void *)];
} fake_vtbl;
static ICorProfilerInfo15 fake_info = {&fake_vtbl.vtbl};
static int fake_version = 10;

static HRESULT STDMETHODCALLTYPE fake_unk_qi(IUnknown *self, REFIID iid, void **out)
{
    (void)self;
    for (int v = 1; v <= fake_version; v++)
        if (clr_guid_equal(iid, clr_info_iids[v])) {
            fake_refs++;
            *out = &fake_info;
            return S_OK;
        }
    *out = NULL;
    return E_NOINTERFACE;
}
static ULONG STDMETHODCALLTYPE fake_unk_addref(IUnknown *self)
{
    (void)self;
    return 1;
}
static ULONG STDMETHODCALLTYPE fake_unk_release(IUnknown *self)
{
    (void)self;
    return 1;
}
static const IUnknownVtbl fake_unk_vtbl = {fake_unk_qi, fake_unk_addref, fake_unk_release};
static IUnknown fake_unk = {&fake_unk_vtbl};

static void test_too_old_runtime_declines(void)
{
    memset(&fake_vtbl, 0, sizeof fake_vtbl);
    fake_vtbl.vtbl.QueryInterface = fake_info_qi;
    fake_vtbl.vtbl.AddRef = fake_info_addref;
    fake_vtbl.vtbl.Release = fake_info_release;
    fake_refs = 0;
    char dir[] = "/tmp/corscope-unit-XXXXXX", out[64], log[128];
    REQUIRE(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/old.corscope", dir);
    snprintf(log, sizeof log, "%s/stderr", dir);
    setenv("CORSCOPE_OUTPUT", out, 1);
    unsetenv("CORSCOPE_CONTROL");

    ICorProfilerCallback11 *cb = profiler_create();
    REQUIRE(cb);
    fflush(stderr);
    int saved = dup(2), to = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    REQUIRE(saved >= 0 && to >= 0);
    dup2(to, 2);
    HRESULT hr = cb->lpVtbl->Initialize(cb, &fake_unk);
    dup2(saved, 2);
    close(saved);
    close(to);
    CHECK(hr < 0);
    CHECK_EQ(fake_refs, 0); /* the interface it took was given back */
    CHECK(access(out, F_OK) < 0 && errno == ENOENT);
    char *said = read_text(log);
    REQUIRE(said);
    int lines = 0;
    for (const char *c = said; *c; c++)
        lines += *c == '\n';
    CHECK_EQ(lines, 1);
    CHECK(!strncmp(said, "corscope: this runtime is too old", 33));
    CHECK(strstr(said, "needs ICorProfilerInfo11") && strstr(said, "offers ICorProfilerInfo10"));
    CHECK(strstr(said, "the program runs without the profiler") != NULL);
    free(said);
    CHECK_EQ(cb->lpVtbl->Shutdown(cb), S_OK);
    cb->lpVtbl->Release(cb);
    unlink(log);
    rmdir(dir);
    unsetenv("CORSCOPE_OUTPUT");
}

void suite_lifecycle(void)
{
    RUN(test_guard_forms);
    RUN(test_info_calls_within_version);
    RUN(test_nothing_written_while_suspended);
    RUN(test_no_log_under_a_lock);
    RUN(test_too_old_runtime_declines);
}
