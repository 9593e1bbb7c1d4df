/*
 * push: continuous profiling to Grafana Pyroscope (docs/push.md).
 *
 * A push session reads a recording as it is written (a pipe from the agent,
 * or a file), cuts it into windows (pstream.h), makes each window a push
 * request (pushreq.h) into the spool (spool.h), and an uploader thread of
 * its own sends the spool to the server (http.h), oldest first, retrying
 * while the server is away.  The reading never waits for the network: the
 * agent's pipe is always drained, and a slow or absent server only fills
 * the spool up to its cap.
 *
 * Two ways in: `corscope record --push URL` runs a session in the record
 * command (the agent writes into a FIFO record reads); the agent alone
 * (CORSCOPE_PUSH=URL, no CLI) starts `corscope push --agent` beside the
 * program with its recording on a pipe (agent/companion.h).  `corscope
 * push FILE` sends a recording already made.
 */
#ifndef CORSCOPE_CLI_PUSH_H
#define CORSCOPE_CLI_PUSH_H

#include <pthread.h>
#include <stdint.h>

#include "cli/http.h"
#include "cli/pstream.h"
#include "cli/pushreq.h"
#include "cli/spool.h"
#include "common/pushcfg.h"
#include "common/visibility.h"

struct push_session {
    struct push_config cfg;
    struct pstream stream;
    struct pushreq_labels labels;
    int have_labels;
    struct spool spool;
    struct http_client http;
    char where[600]; /* the server, for messages (no secrets) */
    int tee_fd;      /* the recording also goes here (-o), -1 when not */
    int tee_failed;
    int file_mode;   /* a finished recording: windows by the data's clock */
    int quiet;
    /* the uploader */
    pthread_t uploader;
    int uploader_started;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int ended;              /* no more windows will come */
    uint64_t linger_until;  /* after ended: give up then (CLOCK_MONOTONIC) */
    /* what happened (under lock where the uploader writes) */
    uint64_t windows, series, body_bytes;
    uint64_t pushed, pushed_series, retries, refused, left;
    uint64_t reader_cpu_ns, uploader_cpu_ns;
    int outage;             /* the server is away now */
    char last_error[256];
};

/* Opens the spool and the client and starts the uploader.  tee_fd: where
 * the recording's bytes are also written (-1 none).  Returns 0, or -1 with
 * the reason. */
HIDDEN int push_start(struct push_session *ps, const struct push_config *cfg, int tee_fd,
                      int quiet, char *err, size_t err_size);
/* Reads the recording from fd until its end (EOF), making windows as they
 * come due.  Returns 0, or -1 when the stream was bad (said). */
HIDDEN int push_read(struct push_session *ps, int fd);
/* The stream has ended: the last windows are made, the uploader sends
 * what it can until the linger time, and stops.  Prints the summary unless
 * quiet.  Returns 0, or 1 when something could not be sent. */
HIDDEN int push_finish(struct push_session *ps);
HIDDEN int cmd_push(int argc, char **argv);
/* The options record and push share, for their getopt_long tables. */
enum {
    PUSH_OPT_URL = 0x400,
    PUSH_OPT_SERVICE,
    PUSH_OPT_LABEL,
    PUSH_OPT_EVERY,
    PUSH_OPT_TIMEOUT,
    PUSH_OPT_LINGER,
    PUSH_OPT_SPOOL,
    PUSH_OPT_SPOOL_MAX,
    PUSH_OPT_USER,
    PUSH_OPT_PASSWORD_FILE,
    PUSH_OPT_TOKEN_FILE,
    PUSH_OPT_TENANT,
    PUSH_OPT_HEADER,
    PUSH_OPT_HEADERS_FILE,
    PUSH_OPT_CA,
    PUSH_OPT_MEMORY,
    PUSH_OPT_END
};
#define PUSH_LONGOPTS                                                     \
    {"push", required_argument, NULL, PUSH_OPT_URL},                      \
    {"service", required_argument, NULL, PUSH_OPT_SERVICE},               \
    {"label", required_argument, NULL, PUSH_OPT_LABEL},                   \
    {"push-every", required_argument, NULL, PUSH_OPT_EVERY},              \
    {"push-timeout", required_argument, NULL, PUSH_OPT_TIMEOUT},          \
    {"push-linger", required_argument, NULL, PUSH_OPT_LINGER},            \
    {"push-spool", required_argument, NULL, PUSH_OPT_SPOOL},              \
    {"push-spool-max", required_argument, NULL, PUSH_OPT_SPOOL_MAX},      \
    {"push-user", required_argument, NULL, PUSH_OPT_USER},                \
    {"push-password-file", required_argument, NULL, PUSH_OPT_PASSWORD_FILE}, \
    {"push-token-file", required_argument, NULL, PUSH_OPT_TOKEN_FILE},    \
    {"push-tenant", required_argument, NULL, PUSH_OPT_TENANT},            \
    {"push-header", required_argument, NULL, PUSH_OPT_HEADER},            \
    {"push-headers-file", required_argument, NULL, PUSH_OPT_HEADERS_FILE}, \
    {"push-ca", required_argument, NULL, PUSH_OPT_CA},                    \
    {"push-memory", required_argument, NULL, PUSH_OPT_MEMORY}
/* The usage lines of those options. */
HIDDEN extern const char push_usage_options[];
/* Sets the push setting of option code opt (PUSH_OPT_*).  Returns 0, or -1
 * with the reason (the value is never repeated: it may be a secret). */
HIDDEN int push_option(struct push_config *c, int opt, const char *arg, char *err,
                       size_t err_size);

#endif
