/*
 * push: see push.h.  Two threads: the caller's reads the recording and
 * makes windows (CPU only, never the network); the uploader sends the
 * spool.  They meet in the spool (its own lock) and in `lock` (the
 * counters, the end).
 */
#include "cli/push.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/clock.h"
#include "common/mem.h"
#include "common/units.h"

/* "corscope: push: ..." on stderr, unless quiet. */
static void say(const struct push_session *ps, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(const struct push_session *ps, const char *fmt, ...)
{
    if (ps->quiet)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "corscope: push: %s\n", line);
}

/* ---- options ------------------------------------------------------------------ */

const char push_usage_options[] =
    "      --push URL          also send the profiles to Grafana Pyroscope (or Alloy)\n"
    "                          at URL, every --push-every, as Pyroscope's .NET agent\n"
    "      --service NAME      the service_name label (default: the program's name)\n"
    "      --label NAME=VALUE  a label of every profile (repeatable)\n"
    "      --push-every TIME   the profiles' length, 1s to 60m (default 15s)\n"
    "      --push-spool DIR    where profiles wait while the server is away\n"
    "                          (default $TMPDIR/corscope-push-UID)\n"
    "      --push-spool-max SIZE  the most they take there; the oldest go first\n"
    "                          (default 64MiB)\n"
    "      --push-timeout TIME one request's time (default 10s)\n"
    "      --push-linger TIME  at the end, how long to keep trying (default 10s)\n"
    "      --push-user USER    basic auth (the password from CORSCOPE_PUSH_PASSWORD or\n"
    "      --push-password-file FILE)\n"
    "      --push-token-file FILE  a bearer token (or CORSCOPE_PUSH_TOKEN)\n"
    "      --push-tenant ID    X-Scope-OrgID, for a multi-tenant server\n"
    "      --push-header 'NAME: VALUE'  another header (repeatable); secret ones in\n"
    "      --push-headers-file FILE\n"
    "      --push-ca FILE      trust this CA besides the system's bundle\n"
    "      --push-memory SIZE  the most the recording's names and stacks take in memory;\n"
    "                          beyond, those unused for a while are forgotten\n"
    "                          (default 64MiB)\n";

int push_option(struct push_config *c, int opt, const char *arg, char *err, size_t err_size)
{
    static const char *const keys[PUSH_OPT_END - PUSH_OPT_URL] = {
        "push", "service", "label", "push_every", "push_timeout", "push_linger", "push_spool",
        "push_spool_max", "push_user", "push_password_file", "push_token_file", "push_tenant",
        "push_header", "push_headers_file", "push_ca", "push_memory"};
    if (opt < PUSH_OPT_URL || opt >= PUSH_OPT_END) {
        snprintf(err, err_size, "not a push option");
        return -1;
    }
    return push_config_set(c, keys[opt - PUSH_OPT_URL], arg, err, err_size);
}

/* ---- the uploader ---------------------------------------------------------------- */

/* A secret from a file: its first line. */
static int read_secret(const char *path, char *out, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, out, size - 1);
    close(fd);
    if (n < 0)
        return -1;
    out[n] = '\0';
    out[strcspn(out, "\r\n")] = '\0';
    return 0;
}

/* The request's headers, secrets read now (a rotated file counts).
 * Returns 0, or -1 with the reason (no secret in it). */
static int auth_headers(const struct push_session *ps, struct buf *h, char *err, size_t err_size)
{
    const struct push_config *c = &ps->cfg;
    char line[2048], secret[1024] = "";
    snprintf(line, sizeof line,
             "User-Agent: corscope/%s\nConnect-Protocol-Version: 1\nConnect-Timeout-Ms: %llu\n",
             CORSCOPE_VERSION, (unsigned long long)(c->timeout_ns / 1000000));
    buf_put(h, line, strlen(line));
    const char *user = c->user[0] ? c->user : c->url.user;
    if (user[0]) {
        const char *env = getenv(PUSH_PASSWORD_ENV);
        if (c->url.password[0])
            snprintf(secret, sizeof secret, "%s", c->url.password);
        else if (c->password_file[0] && read_secret(c->password_file, secret, sizeof secret) < 0) {
            snprintf(err, err_size, "cannot read the password file %.300s", c->password_file);
            return -1;
        } else if (!c->password_file[0] && env)
            snprintf(secret, sizeof secret, "%s", env);
        char plain[1400], b64[1900];
        snprintf(plain, sizeof plain, "%s:%s", user, secret);
        if (http_base64(plain, strlen(plain), b64, sizeof b64) == 0) {
            buf_put(h, "Authorization: Basic ", 21);
            buf_put(h, b64, strlen(b64));
            buf_put(h, "\n", 1);
        }
        memset(plain, 0, sizeof plain);
        memset(b64, 0, sizeof b64);
    } else {
        const char *env = getenv(PUSH_TOKEN_ENV);
        if (c->token_file[0] && read_secret(c->token_file, secret, sizeof secret) < 0) {
            snprintf(err, err_size, "cannot read the token file %.300s", c->token_file);
            return -1;
        }
        if (!c->token_file[0] && env)
            snprintf(secret, sizeof secret, "%s", env);
        if (secret[0]) {
            buf_put(h, "Authorization: Bearer ", 22);
            buf_put(h, secret, strlen(secret));
            buf_put(h, "\n", 1);
        }
    }
    memset(secret, 0, sizeof secret);
    if (c->tenant[0]) {
        snprintf(line, sizeof line, "X-Scope-OrgID: %s\n", c->tenant);
        buf_put(h, line, strlen(line));
    }
    buf_put(h, c->headers, strlen(c->headers));
    if (c->headers_file[0]) {
        struct buf file;
        buf_init(&file);
        int fd = open(c->headers_file, O_RDONLY | O_CLOEXEC);
        char chunk[4096];
        ssize_t n;
        while (fd >= 0 && (n = read(fd, chunk, sizeof chunk)) > 0 && file.len < 65536)
            buf_put(&file, chunk, (size_t)n);
        if (fd >= 0)
            close(fd);
        buf_put(&file, "", 1);
        struct push_config extra;
        push_config_defaults(&extra);
        char why[160];
        int bad = fd < 0 || file.failed ||
                  push_config_set(&extra, "push_headers", (char *)file.data, why, sizeof why) < 0;
        if (file.data)
            memset(file.data, 0, file.cap);
        buf_free(&file);
        if (bad) {
            memset(&extra, 0, sizeof extra);
            snprintf(err, err_size, "%.300s: %s", c->headers_file,
                     fd < 0 ? "cannot read it" : "not \"Name: value\" lines");
            return -1;
        }
        buf_put(h, extra.headers, strlen(extra.headers));
        memset(&extra, 0, sizeof extra);
    }
    buf_put(h, "", 1);
    if (h->failed) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    return 0;
}

/* Pyroscope's answer in a line: the Connect error's message when there is
 * one ({"code":"invalid_argument","message":"..."}). */
static void server_says(const struct http_response *rs, char *out, size_t size)
{
    const char *body = (const char *)rs->body.data;
    size_t n = rs->body.len;
    char text[400] = "";
    const char *m = n ? memmem(body, n, "\"message\"", 9) : NULL;
    if (m) {
        const char *q = memchr(m + 9, '"', n - (size_t)(m + 9 - body));
        if (q) {
            size_t k = 0;
            for (const char *p = q + 1; p < body + n && *p != '"' && k + 1 < sizeof text; p++)
                text[k++] = (*p >= ' ' && *p < 0x7f) ? *p : '?';
            text[k] = '\0';
        }
    } else {
        size_t k = 0;
        for (size_t i = 0; i < n && k + 1 < sizeof text && k < 200; i++)
            text[k++] = (body[i] >= ' ' && body[i] < 0x7f) ? body[i] : ' ';
        text[k] = '\0';
    }
    snprintf(out, size, "status %d%s%s", rs->status, text[0] ? ": " : "", text);
}

/* What to do after an answer. */
enum verdict { SENT, RETRY, REFUSED };

static enum verdict judge(int status)
{
    if (status / 100 == 2)
        return SENT;
    /* the server is away, busy or not ready; credentials that a rotated
     * file or the server's side may put right */
    if (status / 100 == 5 || status == 429 || status == 408 || status == 401 || status == 403 ||
        status == 404)
        return RETRY;
    return REFUSED;
}

/* Waits up to ns, or until woken; returns with the lock held. */
static void wait_locked(struct push_session *ps, uint64_t ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + ns;
    ts.tv_sec = (time_t)(t / 1000000000ull);
    ts.tv_nsec = (long)(t % 1000000000ull);
    pthread_cond_timedwait(&ps->wake, &ps->lock, &ts);
}

static void *uploader_main(void *arg)
{
    struct push_session *ps = arg;
    /* a peer that closes its end makes a write raise SIGPIPE on this
     * thread: blocked here, the write fails with EPIPE instead (the
     * signal, left pending, is taken below) */
    sigset_t pipe_set;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, NULL);
    struct buf body, headers;
    buf_init(&body);
    buf_init(&headers);
    uint64_t backoff = 0;
    for (;;) {
        pthread_mutex_lock(&ps->lock);
        int ended = ps->ended;
        uint64_t until = ps->linger_until;
        pthread_mutex_unlock(&ps->lock);
        if (ended && (clock_now_ns() >= until || !spool_waiting(&ps->spool)))
            break;
        uint64_t id = spool_take(&ps->spool, &body);
        if (!id) {
            pthread_mutex_lock(&ps->lock);
            if (!ps->ended)
                wait_locked(ps, 1000000000ull);
            pthread_mutex_unlock(&ps->lock);
            continue;
        }
        char err[512] = "";
        buf_reset(&headers);
        struct http_response rs;
        memset(&rs, 0, sizeof rs);
        int rc = auth_headers(ps, &headers, err, sizeof err);
        uint64_t left = ended ? (until > clock_now_ns() ? until - clock_now_ns() : 0) : ps->cfg.timeout_ns;
        if (rc == 0)
            rc = http_post(&ps->http, "/push.v1.PusherService/Push", "application/proto",
                           (const char *)headers.data, body.data, body.len,
                           left < ps->cfg.timeout_ns ? left + 1 : ps->cfg.timeout_ns, &rs, err,
                           sizeof err);
        if (headers.data)
            memset(headers.data, 0, headers.cap);
        struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_set, NULL, &zero) > 0) {
        }
        enum verdict v = rc < 0 ? RETRY : judge(rs.status);
        if (rc == 0 && v != SENT)
            server_says(&rs, err, sizeof err);
        pthread_mutex_lock(&ps->lock);
        if (v == SENT) {
            ps->pushed++;
            if (ps->outage)
                say(ps, "%s answers again; sending what waited (%zu)", ps->where,
                    spool_waiting(&ps->spool) - 1);
            ps->outage = 0;
            backoff = 0;
        } else if (v == REFUSED) {
            if (ps->refused++ < 3)
                say(ps, "%s refused a profile: %s", ps->where, err);
        } else {
            ps->retries++;
            if (!ps->outage)
                say(ps, "cannot send to %s: %s; the profiles wait (up to %llu MiB) and go "
                        "when it answers", ps->where, err,
                    (unsigned long long)(ps->cfg.spool_max >> 20));
            ps->outage = 1;
            snprintf(ps->last_error, sizeof ps->last_error, "%s", err);
        }
        pthread_mutex_unlock(&ps->lock);
        if (v == RETRY) {
            spool_release(&ps->spool, id);
            backoff = backoff ? backoff * 2 : 500000000ull;
            if (backoff > 30000000000ull)
                backoff = 30000000000ull;
            if (rc == 0 && rs.retry_after_s && rs.retry_after_s * 1000000000ull < 300000000000ull)
                backoff = rs.retry_after_s * 1000000000ull;
            pthread_mutex_lock(&ps->lock);
            if (!ps->ended || clock_now_ns() < ps->linger_until)
                wait_locked(ps, ps->ended ? (backoff < 1000000000ull ? backoff : 1000000000ull)
                                          : backoff);
            pthread_mutex_unlock(&ps->lock);
        } else {
            spool_done(&ps->spool, id);
        }
        http_response_free(&rs);
    }
    buf_free(&body);
    buf_free(&headers);
    pthread_mutex_lock(&ps->lock);
    ps->uploader_cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    pthread_mutex_unlock(&ps->lock);
    return NULL;
}

int push_start(struct push_session *ps, const struct push_config *cfg, int tee_fd, int quiet,
               char *err, size_t err_size)
{
    memset(ps, 0, sizeof *ps);
    ps->cfg = *cfg;
    ps->tee_fd = tee_fd;
    ps->quiet = quiet;
    push_url_display(&cfg->url, ps->where, sizeof ps->where);
    if (push_config_check(cfg, err, err_size) < 0)
        return -1;
    if (pstream_init(&ps->stream, cfg->every_ns) < 0) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    ps->stream.start_mono_ns = clock_now_ns(); /* until the recording says */
    ps->stream.defs.budget = ps->stream.defs.threshold = cfg->memory;
    if (http_client_init(&ps->http, &cfg->url, cfg->ca_file, err, err_size) < 0) {
        pstream_free(&ps->stream);
        return -1;
    }
    char key[1400];
    snprintf(key, sizeof key, "%s\n%s", ps->where, cfg->tenant);
    if (spool_open(&ps->spool, cfg->spool, key, cfg->spool_max) < 0) {
        snprintf(err, err_size, "out of memory");
        http_client_free(&ps->http);
        pstream_free(&ps->stream);
        return -1;
    }
    if (ps->spool.note[0])
        fprintf(stderr, "corscope: %s\n", ps->spool.note);
    if (ps->spool.adopted)
        say(ps, "%llu profiles an earlier run could not send go first",
            (unsigned long long)ps->spool.adopted);
    pthread_mutex_init(&ps->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&ps->wake, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&ps->uploader, NULL, uploader_main, ps) != 0) {
        snprintf(err, err_size, "cannot start the uploader thread");
        spool_close(&ps->spool);
        http_client_free(&ps->http);
        pstream_free(&ps->stream);
        return -1;
    }
    ps->uploader_started = 1;
    return 0;
}

/* Makes every window that is due into the spool.  at_end: all of them. */
static int make_windows(struct push_session *ps, int at_end)
{
    uint64_t now = ps->file_mode ? ps->stream.start_mono_ns + ps->stream.last_time : clock_now_ns();
    for (;;) {
        struct pstream_window w;
        int got = pstream_next_window(&ps->stream, now, at_end, &w);
        if (got < 0) {
            fprintf(stderr, "corscope: push: out of memory while making a profile\n");
            return -1;
        }
        if (!got)
            return 0;
        if (!ps->have_labels) {
            pushreq_labels(&ps->cfg, &ps->stream, &ps->labels);
            ps->have_labels = 1;
        }
        struct buf body;
        buf_init(&body);
        char err[300];
        int n = pushreq_build(&w, &ps->labels, &body, err, sizeof err);
        if (n < 0)
            fprintf(stderr, "corscope: push: %s\n", err);
        pthread_mutex_lock(&ps->lock);
        ps->windows++;
        if (n > 0) {
            ps->series += (uint64_t)n;
            ps->body_bytes += body.len;
        }
        pthread_mutex_unlock(&ps->lock);
        if (n > 0) {
            spool_add(&ps->spool, w.start_ns, body.data, body.len);
            pthread_mutex_lock(&ps->lock);
            pthread_cond_signal(&ps->wake);
            pthread_mutex_unlock(&ps->lock);
        }
        buf_free(&body);
        pstream_window_free(&w);
    }
}

static void tee_bytes(struct push_session *ps, const void *data, size_t n)
{
    const char *p = data;
    while (ps->tee_fd >= 0 && !ps->tee_failed && n) {
        ssize_t w = write(ps->tee_fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            fprintf(stderr, "corscope: cannot write the recording: %s; the pushes go on\n",
                    strerror(errno));
            ps->tee_failed = 1;
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

int push_read(struct push_session *ps, int fd)
{
    uint8_t *chunk = mem_alloc(1u << 16);
    if (!chunk)
        return -1;
    int rc = 0;
    for (;;) {
        int timeout = -1;
        if (!ps->file_mode) {
            uint64_t due = pstream_next_due(&ps->stream), now = clock_now_ns();
            if (due != UINT64_MAX)
                timeout = due <= now ? 0 : (int)((due - now) / 1000000 + 1);
        }
        struct pollfd p = {fd, POLLIN, 0};
        int ready = ps->file_mode ? 1 : poll(&p, 1, timeout);
        if (ready < 0 && errno != EINTR) {
            rc = -1;
            break;
        }
        if (ready > 0) {
            ssize_t n = read(fd, chunk, 1u << 16);
            if (n < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (n <= 0)
                break; /* the writer is gone: the end */
            tee_bytes(ps, chunk, (size_t)n);
            if (!ps->stream.failed && pstream_feed(&ps->stream, chunk, (size_t)n) < 0) {
                fprintf(stderr, "corscope: push: the recording stream is bad (%s); no more "
                                "profiles from it\n", ps->stream.problem);
                rc = -1;
                /* go on draining the pipe: the agent must never block on it */
            }
        }
        if (!ps->stream.failed && make_windows(ps, 0) < 0)
            rc = -1;
    }
    mem_free(chunk);
    ps->reader_cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID);
    return rc;
}

int push_finish(struct push_session *ps)
{
    if (!ps->stream.failed)
        make_windows(ps, 1);
    pthread_mutex_lock(&ps->lock);
    ps->ended = 1;
    ps->linger_until = clock_now_ns() + ps->cfg.linger_ns;
    pthread_cond_signal(&ps->wake);
    pthread_mutex_unlock(&ps->lock);
    if (ps->uploader_started)
        pthread_join(ps->uploader, NULL);
    ps->left = spool_waiting(&ps->spool);
    uint64_t late = ps->stream.late_items;
    int rc = ps->left || ps->spool.dropped || ps->refused ? 1 : 0;
    /* nothing came (the program was no .NET program): the caller says so */
    int said = ps->stream.header_seen || ps->pushed || ps->left || ps->spool.adopted;
    if (!ps->quiet && said) {
        char extra[512] = "";
        size_t used = 0;
        if (ps->spool.dropped)
            used += (size_t)snprintf(extra + used, sizeof extra - used,
                                     "; %llu dropped (%llu KiB) to stay under --push-spool-max",
                                     (unsigned long long)ps->spool.dropped,
                                     (unsigned long long)(ps->spool.dropped_bytes >> 10));
        if (ps->refused && used < sizeof extra)
            used += (size_t)snprintf(extra + used, sizeof extra - used, "; %llu refused",
                                     (unsigned long long)ps->refused);
        if (ps->left && used < sizeof extra)
            used += (size_t)snprintf(extra + used, sizeof extra - used,
                                     "; %llu not sent (%s), kept in %s for the next run",
                                     (unsigned long long)ps->left,
                                     ps->last_error[0] ? ps->last_error : "the server was away",
                                     ps->spool.dir[0] ? ps->spool.dir : "memory: lost");
        size_t cut = ps->stream.in.len - ps->stream.in_pos;
        if (cut && !ps->stream.failed && used < sizeof extra)
            used += (size_t)snprintf(extra + used, sizeof extra - used,
                                     "; the recording ends inside a chunk (%zu bytes not read: "
                                     "the program was killed while writing)", cut);
        if (ps->stream.defs.forgotten_refs && used < sizeof extra)
            used += (size_t)snprintf(extra + used, sizeof extra - used,
                                     "; %llu references to names forgotten to stay under "
                                     "--push-memory, shown as [forgotten]",
                                     (unsigned long long)ps->stream.defs.forgotten_refs);
        if (late && used < sizeof extra)
            snprintf(extra + used, sizeof extra - used,
                     "; %llu late samples went into a later profile", (unsigned long long)late);
        fprintf(stderr,
                "corscope: push: %llu windows, %llu of %llu requests sent to %s (%llu retries)%s; "
                "uploader CPU %.3f s\n",
                (unsigned long long)ps->windows, (unsigned long long)ps->pushed,
                (unsigned long long)(ps->pushed + ps->left + ps->refused + ps->spool.dropped),
                ps->where, (unsigned long long)ps->retries, extra,
                (double)(ps->reader_cpu_ns + ps->uploader_cpu_ns) / 1e9);
    }
    spool_close(&ps->spool);
    http_client_free(&ps->http);
    pstream_free(&ps->stream);
    pthread_cond_destroy(&ps->wake);
    pthread_mutex_destroy(&ps->lock);
    return rc;
}

/* ---- corscope push ---------------------------------------------------------------- */

static const char push_usage[] =
    "usage: corscope push --push URL [options] [FILE | -]\n"
    "\n"
    "Sends a recording to Grafana Pyroscope (or Grafana Alloy) as profiles of\n"
    "--push-every each, labelled as Pyroscope's .NET agent labels them: a\n"
    "finished recording (FILE), or one being written on standard input (how the\n"
    "agent alone, with CORSCOPE_PUSH set, sends its program's profiles).  The\n"
    "settings come from these options or the CORSCOPE_PUSH* variables (docs/push.md).\n"
    "\n"
    "      --tee FILE          also write the recording there (created, never\n"
    "                          overwritten)\n"
    "  -q, --quiet             no summary line\n"
    "%s"
    "  -h, --help\n";

enum { OPT_TEE = 0x300, OPT_AGENT };

int cmd_push(int argc, char **argv)
{
    static const struct option longopts[] = {
        PUSH_LONGOPTS,
        {"tee", required_argument, NULL, OPT_TEE},
        {"agent", no_argument, NULL, OPT_AGENT},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct push_config cfg;
    char err[512];
    if (push_config_from_env(&cfg, err, sizeof err) < 0)
        return cli_usage_error("push", "%s", err);
    const char *tee_path = NULL;
    int quiet = 0, agent = 0;
    optind = 1;
    opterr = 0;
    int c, longindex = -1;
    while ((c = getopt_long(argc, argv, "+:qh", longopts, &longindex)) != -1) {
        char opt[64];
        if (longindex >= 0)
            snprintf(opt, sizeof opt, "--%s", longopts[longindex].name);
        else
            snprintf(opt, sizeof opt, "%s", argv[optind - 1]);
        longindex = -1;
        if (c >= PUSH_OPT_URL && c < PUSH_OPT_END) {
            if (push_option(&cfg, c, optarg, err, sizeof err) < 0)
                return cli_usage_error("push", "%s: %s", opt, err);
            continue;
        }
        switch (c) {
        case OPT_TEE: tee_path = optarg; break;
        case OPT_AGENT: agent = 1; break;
        case 'q': quiet = 1; break;
        case 'h': printf(push_usage, push_usage_options); return 0;
        case ':': return cli_usage_error("push", "option %s needs a value", opt);
        default: return cli_usage_error("push", "unknown option '%s'", opt);
        }
    }
    if (!cfg.url_text[0])
        return cli_usage_error("push", "no server: --push URL (or CORSCOPE_PUSH)");
    if (argc - optind > 1)
        return cli_usage_error("push", "one recording at a time");
    const char *input = optind < argc ? argv[optind] : "-";
    int fd = 0, file_mode = 0;
    if (strcmp(input, "-") != 0) {
        fd = open(input, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            cli_error("cannot open %s: %s", input, strerror(errno));
            return EXIT_WORK_FAILED;
        }
        file_mode = 1;
    }
    if (agent) {
        /* beside the program, never in its way; the agent started it with
         * every signal blocked */
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (setpriority(PRIO_PROCESS, 0, 10) < 0) {
            /* already lower, or not allowed: fine */
        }
        signal(SIGPIPE, SIG_IGN);
        signal(SIGINT, SIG_IGN); /* the program's end is ours: the pipe's end says it */
        signal(SIGHUP, SIG_IGN);
    }
    int tee_fd = -1;
    if (tee_path) {
        tee_fd = open(tee_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (tee_fd < 0) {
            cli_error("cannot create %s: %s", tee_path, strerror(errno));
            if (!agent)
                return EXIT_WORK_FAILED;
            /* the agent's companion pushes anyway */
        }
    }
    struct push_session ps;
    if (push_start(&ps, &cfg, tee_fd, quiet, err, sizeof err) < 0) {
        cli_error("push: %s", err);
        if (agent) {
            /* the agent writes on: its pipe is drained so the program never waits */
            char sink[65536];
            while (read(fd, sink, sizeof sink) > 0) {
            }
        }
        return EXIT_WORK_FAILED;
    }
    ps.file_mode = file_mode;
    int bad = push_read(&ps, fd) < 0;
    const char *level = getenv("CORSCOPE_LOG");
    int verbose = level && (!strcmp(level, "info") || !strcmp(level, "debug"));
    if (agent && !verbose) {
        /* the program has ended: whoever reads its standard error (a
         * pipe, $(...)) must not wait for our last sends */
        int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (null_fd >= 0) {
            dup2(null_fd, 2);
            close(null_fd);
        }
        pthread_mutex_lock(&ps.lock);
        ps.quiet = 1;
        pthread_mutex_unlock(&ps.lock);
    }
    int rc = push_finish(&ps);
    if (agent && verbose) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        fprintf(stderr, "corscope: push: the uploader used %.3f s of CPU in all\n",
                (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                    (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
    }
    if (tee_fd >= 0)
        close(tee_fd);
    if (fd > 0)
        close(fd);
    return bad ? EXIT_WORK_FAILED : rc;
}
