/*
 * pushcfg: the settings of continuous profiling to Grafana Pyroscope
 * (docs/push.md), parsed by one piece of code whether they come from
 * `corscope record --push`'s options, `corscope push`'s, or the program's
 * environment (CORSCOPE_PUSH=URL ...: the agent alone, no CLI).
 *
 * The agent reads them only to decide whether to start the uploader
 * beside the program and to refuse a bad value before the program runs
 * (it then declines to load, as for any bad CORSCOPE_* setting); the
 * uploader (`corscope push`) reads them again from the same environment.
 *
 * Secrets (a password, a bearer token, headers that carry one) are named
 * here, never held: a setting says where a secret is (an environment
 * variable, a file) and the uploader reads it when it sends (a rotated
 * token file is picked up).  A URL's user:password@ part is the one secret
 * the settings hold; push_url_display never shows it.
 */
#ifndef CORSCOPE_PUSHCFG_H
#define CORSCOPE_PUSHCFG_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"

#define PUSH_MAX_LABELS 24
#define PUSH_LABEL_NAME_MAX 64
#define PUSH_LABEL_VALUE_MAX 256
#define PUSH_EVERY_MIN_NS 1000000000ull        /* 1 s */
#define PUSH_EVERY_MAX_NS 3600000000000ull     /* 1 h */
#define PUSH_EVERY_DEFAULT_NS 15000000000ull   /* 15 s, as Pyroscope's own agents */
#define PUSH_SPOOL_MAX_DEFAULT (64ull << 20)
#define PUSH_SPOOL_MAX_MIN (4ull << 10)
#define PUSH_MEMORY_DEFAULT (64ull << 20)
#define PUSH_MEMORY_MIN (1ull << 20)
#define PUSH_TIMEOUT_DEFAULT_NS 10000000000ull /* one request */
#define PUSH_LINGER_DEFAULT_NS 10000000000ull  /* at the end, for what waits */
#define PUSH_HEADERS_MAX 4096

struct push_url {
    int https;
    char host[256]; /* a name, an IPv4 address, or an IPv6 one without brackets */
    unsigned port;
    char path[512]; /* a prefix before /push.v1.PusherService/Push, no trailing '/' */
    char user[128]; /* user:password@ of the URL; "" when none */
    char password[256];
};

struct push_config {
    char url_text[1024]; /* "" = no push */
    struct push_url url;
    char service[PUSH_LABEL_VALUE_MAX]; /* "" = from the program's name */
    char label_names[PUSH_MAX_LABELS][PUSH_LABEL_NAME_MAX];
    char label_values[PUSH_MAX_LABELS][PUSH_LABEL_VALUE_MAX];
    size_t label_count;
    uint64_t every_ns;
    uint64_t timeout_ns;
    uint64_t linger_ns;
    uint64_t spool_max;
    uint64_t memory; /* the stream's definitions kept in memory (cli/pdefs.h) */
    char spool[PATH_MAX]; /* "" = $TMPDIR/corscope-push-UID */
    char user[256];       /* basic auth; its password from the environment or a file */
    char password_file[PATH_MAX];
    char token_file[PATH_MAX]; /* bearer token; CORSCOPE_PUSH_TOKEN else */
    char tenant[256];          /* X-Scope-OrgID */
    char headers[PUSH_HEADERS_MAX]; /* "Name: value" lines */
    char headers_file[PATH_MAX];    /* more such lines, read when sending */
    char ca_file[PATH_MAX];         /* trusted besides the system's CA bundle */
};

/* The settings by the names of record's long options (without "--"), and
 * the environment variables of the agent-alone mode. */
#define PUSH_KEYS(X)                                  \
    X(push, "CORSCOPE_PUSH")                          \
    X(service, "CORSCOPE_SERVICE")                    \
    X(labels, "CORSCOPE_LABELS")                      \
    X(push_every, "CORSCOPE_PUSH_EVERY")              \
    X(push_timeout, "CORSCOPE_PUSH_TIMEOUT")          \
    X(push_linger, "CORSCOPE_PUSH_LINGER")            \
    X(push_spool, "CORSCOPE_PUSH_SPOOL")              \
    X(push_spool_max, "CORSCOPE_PUSH_SPOOL_MAX")      \
    X(push_memory, "CORSCOPE_PUSH_MEMORY")            \
    X(push_user, "CORSCOPE_PUSH_USER")                \
    X(push_password_file, "CORSCOPE_PUSH_PASSWORD_FILE") \
    X(push_token_file, "CORSCOPE_PUSH_TOKEN_FILE")    \
    X(push_tenant, "CORSCOPE_PUSH_TENANT")            \
    X(push_headers, "CORSCOPE_PUSH_HEADERS")          \
    X(push_headers_file, "CORSCOPE_PUSH_HEADERS_FILE") \
    X(push_ca, "CORSCOPE_PUSH_CA")
/* Secrets by value, read from the environment when sending, never copied
 * into the settings. */
#define PUSH_PASSWORD_ENV "CORSCOPE_PUSH_PASSWORD"
#define PUSH_TOKEN_ENV "CORSCOPE_PUSH_TOKEN"

HIDDEN void push_config_defaults(struct push_config *c);
/* One setting from text: a key of PUSH_KEYS, or "label" (one NAME=VALUE;
 * "labels" takes a comma-separated list of them) or "push_header" (one
 * "Name: value" line added).  Returns 0, or -1 with a one-line reason. */
HIDDEN int push_config_set(struct push_config *c, const char *key, const char *value, char *err,
                           size_t err_size);
/* Every CORSCOPE_PUSH* / CORSCOPE_SERVICE / CORSCOPE_LABELS variable.
 * Returns 0 (c->url_text empty when CORSCOPE_PUSH is not set) or -1 with
 * the reason for the first bad one. */
HIDDEN int push_config_from_env(struct push_config *c, char *err, size_t err_size);
/* The same but CORSCOPE_PUSH: the settings `record --push URL` takes from
 * the environment (only --push sends). */
HIDDEN int push_config_settings_from_env(struct push_config *c, char *err, size_t err_size);
/* What no single setting can say: a password without a user ... Returns 0
 * or -1 with the reason. */
HIDDEN int push_config_check(const struct push_config *c, char *err, size_t err_size);
HIDDEN int push_url_parse(const char *text, struct push_url *u, char *err, size_t err_size);
/* scheme://host:port/path, never the user or password. */
HIDDEN void push_url_display(const struct push_url *u, char *out, size_t size);
/* Is `name` a label a user may set (Prometheus' legacy names, not one of
 * those corscope sets itself)?  NULL, or why not. */
HIDDEN const char *push_label_refusal(const char *name);
/* Is the environment asking for pushes at all (CORSCOPE_PUSH set)? */
HIDDEN int push_config_in_env(void);

#endif
