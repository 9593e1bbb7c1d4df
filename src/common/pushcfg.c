/*
 * pushcfg: see pushcfg.h.
 */
#include "common/pushcfg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/units.h"

void push_config_defaults(struct push_config *c)
{
    memset(c, 0, sizeof *c);
    c->every_ns = PUSH_EVERY_DEFAULT_NS;
    c->timeout_ns = PUSH_TIMEOUT_DEFAULT_NS;
    c->linger_ns = PUSH_LINGER_DEFAULT_NS;
    c->spool_max = PUSH_SPOOL_MAX_DEFAULT;
    c->memory = PUSH_MEMORY_DEFAULT;
}

/* Copies text into out (size bytes); -1 when it does not fit. */
static int copy(char *out, size_t size, const char *text, size_t len)
{
    if (len >= size)
        return -1;
    memcpy(out, text, len);
    out[len] = '\0';
    return 0;
}

/* Valid UTF-8 without control characters? */
static int printable_utf8(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned c = p[i];
        if (c < 0x20 || c == 0x7f)
            return 0;
        size_t more = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2
                                 : (c & 0xf8) == 0xf0 ? 3 : 9;
        if (more == 9 || (more == 1 && c < 0xc2) || i + more >= n)
            return 0;
        for (size_t k = 1; k <= more; k++)
            if ((p[i + k] & 0xc0) != 0x80)
                return 0;
        i += more + 1;
    }
    return 1;
}

int push_url_parse(const char *text, struct push_url *u, char *err, size_t err_size)
{
    memset(u, 0, sizeof *u);
    const char *p;
    if (!strncasecmp(text, "https://", 8)) {
        u->https = 1;
        p = text + 8;
    } else if (!strncasecmp(text, "http://", 7)) {
        p = text + 7;
    } else {
        snprintf(err, err_size, "not an http:// or https:// URL");
        return -1;
    }
    const char *end = p + strcspn(p, "/?#");
    if (*end == '?' || *end == '#' || strchr(end, '?') || strchr(end, '#')) {
        snprintf(err, err_size, "a push URL has no query or fragment");
        return -1;
    }
    /* user:password@ */
    const char *at = memchr(p, '@', (size_t)(end - p));
    if (at) {
        const char *colon = memchr(p, ':', (size_t)(at - p));
        size_t ul = colon ? (size_t)(colon - p) : (size_t)(at - p);
        if (copy(u->user, sizeof u->user, p, ul) < 0 ||
            (colon && copy(u->password, sizeof u->password, colon + 1,
                           (size_t)(at - colon - 1)) < 0)) {
            snprintf(err, err_size, "the URL's user or password is too long");
            return -1;
        }
        p = at + 1;
    }
    const char *host_end, *port = NULL;
    if (*p == '[') {
        const char *close = memchr(p, ']', (size_t)(end - p));
        if (!close) {
            snprintf(err, err_size, "unclosed [ in the host");
            return -1;
        }
        if (copy(u->host, sizeof u->host, p + 1, (size_t)(close - p - 1)) < 0) {
            snprintf(err, err_size, "host name too long");
            return -1;
        }
        host_end = close + 1;
        if (host_end < end && *host_end != ':') {
            snprintf(err, err_size, "unexpected text after the host");
            return -1;
        }
        if (host_end < end)
            port = host_end + 1;
    } else {
        host_end = memchr(p, ':', (size_t)(end - p));
        if (host_end)
            port = host_end + 1;
        else
            host_end = end;
        if (copy(u->host, sizeof u->host, p, (size_t)(host_end - p)) < 0) {
            snprintf(err, err_size, "host name too long");
            return -1;
        }
    }
    if (!u->host[0]) {
        snprintf(err, err_size, "no host in the URL");
        return -1;
    }
    for (const char *h = u->host; *h; h++) {
        if (!(*h == '-' || *h == '.' || *h == ':' || *h == '_' || (*h >= '0' && *h <= '9') ||
              (*h >= 'a' && *h <= 'z') || (*h >= 'A' && *h <= 'Z'))) {
            snprintf(err, err_size, "bad character in the host name");
            return -1;
        }
    }
    u->port = u->https ? 443 : 80;
    if (port) {
        char digits[8];
        uint64_t n;
        const char *why = NULL;
        if (copy(digits, sizeof digits, port, (size_t)(end - port)) < 0 ||
            units_parse_count(digits, 65535, &n, &why) < 0 || n == 0) {
            snprintf(err, err_size, "bad port");
            return -1;
        }
        u->port = (unsigned)n;
    }
    size_t pl = strlen(end);
    while (pl && end[pl - 1] == '/')
        pl--;
    if (copy(u->path, sizeof u->path, end, pl) < 0) {
        snprintf(err, err_size, "URL path too long");
        return -1;
    }
    for (const char *c = u->path; *c; c++) {
        if (*c <= ' ' || *c == 0x7f) {
            snprintf(err, err_size, "spaces or control characters in the URL path");
            return -1;
        }
    }
    return 0;
}

void push_url_display(const struct push_url *u, char *out, size_t size)
{
    int v6 = strchr(u->host, ':') != NULL;
    snprintf(out, size, "%s://%s%s%s:%u%s", u->https ? "https" : "http", v6 ? "[" : "", u->host,
             v6 ? "]" : "", u->port, u->path);
}

const char *push_label_refusal(const char *name)
{
    if (!name[0])
        return "an empty label name";
    for (const char *c = name; *c; c++) {
        int ok = *c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                 (c != name && ((*c >= '0' && *c <= '9') || *c == '.'));
        if (!ok)
            return "a label name is letters, digits, '_' and '.', not starting with a digit";
    }
    if (strlen(name) >= PUSH_LABEL_NAME_MAX)
        return "label name too long";
    if (!strncmp(name, "__", 2))
        return "names starting with __ are Pyroscope's own";
    static const char *const ours[] = {"service_name", "spy_name", "pid",
                                       "otel.scope.name", "otel.scope.version",
                                       "process.runtime.name", "process.runtime.version"};
    for (size_t i = 0; i < sizeof ours / sizeof ours[0]; i++)
        if (!strcmp(name, ours[i]))
            return !strcmp(name, "service_name") ? "set the service with --service"
                                                 : "corscope sets this label itself";
    return NULL;
}

static int add_label(struct push_config *c, const char *text, size_t len, char *err,
                     size_t err_size)
{
    const char *eq = memchr(text, '=', len);
    if (!eq) {
        snprintf(err, err_size, "a label is NAME=VALUE");
        return -1;
    }
    char name[PUSH_LABEL_NAME_MAX];
    if (copy(name, sizeof name, text, (size_t)(eq - text)) < 0) {
        snprintf(err, err_size, "label name too long");
        return -1;
    }
    const char *why = push_label_refusal(name);
    if (why) {
        snprintf(err, err_size, "%.64s: %s", name, why);
        return -1;
    }
    size_t vl = len - (size_t)(eq - text) - 1;
    if (!vl || !printable_utf8(eq + 1, vl)) {
        snprintf(err, err_size, "%s: a label's value is printable UTF-8, not empty", name);
        return -1;
    }
    size_t at = c->label_count;
    for (size_t i = 0; i < c->label_count; i++)
        if (!strcmp(c->label_names[i], name))
            at = i; /* the later one wins */
    if (at == PUSH_MAX_LABELS) {
        snprintf(err, err_size, "at most %d labels", PUSH_MAX_LABELS);
        return -1;
    }
    if (copy(c->label_values[at], sizeof c->label_values[at], eq + 1, vl) < 0) {
        snprintf(err, err_size, "%s: label value too long", name);
        return -1;
    }
    memcpy(c->label_names[at], name, strlen(name) + 1);
    if (at == c->label_count)
        c->label_count++;
    return 0;
}

/* Headers corscope writes itself, which a user's line must not replace. */
static int own_header(const char *name, size_t len)
{
    static const char *const own[] = {"host", "content-length", "content-type",
                                      "transfer-encoding", "connection", "connect-protocol-version"};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (strlen(own[i]) == len && !strncasecmp(own[i], name, len))
            return 1;
    return 0;
}

/* One "Name: value" line (len bytes)?  NULL, or what is wrong. */
static const char *header_refusal(const char *line, size_t len)
{
    const char *colon = memchr(line, ':', len);
    if (!colon || colon == line)
        return "a header is \"Name: value\"";
    for (const char *c = line; c < colon; c++) {
        if (*c <= ' ' || *c >= 0x7f || strchr("()<>@,;:\\\"/[]?={}", *c))
            return "bad character in a header's name";
    }
    if (own_header(line, (size_t)(colon - line)))
        return "corscope writes that header itself";
    for (const char *c = colon + 1; c < line + len; c++)
        if ((unsigned char)*c < 0x20 && *c != '\t')
            return "control character in a header's value";
    return NULL;
}

static int add_headers(struct push_config *c, const char *text, char *err, size_t err_size)
{
    size_t used = strlen(c->headers);
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, "\n");
        size_t trimmed = len && p[len - 1] == '\r' ? len - 1 : len;
        if (trimmed) {
            const char *why = header_refusal(p, trimmed);
            if (why) {
                snprintf(err, err_size, "%s", why);
                return -1;
            }
            if (used + trimmed + 2 > sizeof c->headers) {
                snprintf(err, err_size, "too many headers");
                return -1;
            }
            memcpy(c->headers + used, p, trimmed);
            used += trimmed;
            c->headers[used++] = '\n';
            c->headers[used] = '\0';
        }
        p += len + (p[len] == '\n');
    }
    return 0;
}

static int set_duration(uint64_t *out, const char *value, uint64_t min, uint64_t max,
                        const char *range, char *err, size_t err_size)
{
    const char *why = NULL;
    uint64_t ns;
    if (units_parse_duration(value, 0, &ns, &why) < 0) {
        snprintf(err, err_size, "%s", why ? why : "not a duration");
        return -1;
    }
    if (ns < min || ns > max) {
        snprintf(err, err_size, "%s", range);
        return -1;
    }
    *out = ns;
    return 0;
}

static int set_size(uint64_t *out, const char *value, uint64_t min, const char *range, char *err,
                    size_t err_size)
{
    const char *why = NULL;
    uint64_t n;
    if (units_parse_size(value, 1ull << 40, &n, &why) < 0) {
        snprintf(err, err_size, "%s", why ? why : "not a size");
        return -1;
    }
    if (n < min) {
        snprintf(err, err_size, "%s", range);
        return -1;
    }
    *out = n;
    return 0;
}

static int set_path(char *out, size_t size, const char *value, char *err, size_t err_size)
{
    if (!value[0] || copy(out, size, value, strlen(value)) < 0) {
        snprintf(err, err_size, "%s", value[0] ? "path too long" : "an empty path");
        return -1;
    }
    return 0;
}

int push_config_set(struct push_config *c, const char *key, const char *value, char *err,
                    size_t err_size)
{
    if (!strcmp(key, "push")) {
        if (push_url_parse(value, &c->url, err, err_size) < 0)
            return -1;
        return copy(c->url_text, sizeof c->url_text, value, strlen(value)) < 0
                   ? (snprintf(err, err_size, "URL too long"), -1)
                   : 0;
    }
    if (!strcmp(key, "service")) {
        size_t n = strlen(value);
        if (!n || !printable_utf8(value, n) || copy(c->service, sizeof c->service, value, n) < 0) {
            snprintf(err, err_size, "a service name is printable UTF-8, 1 to %d bytes",
                     PUSH_LABEL_VALUE_MAX - 1);
            return -1;
        }
        return 0;
    }
    if (!strcmp(key, "label"))
        return add_label(c, value, strlen(value), err, err_size);
    if (!strcmp(key, "labels")) {
        for (const char *p = value; *p;) {
            size_t len = strcspn(p, ",");
            if (len && add_label(c, p, len, err, err_size) < 0)
                return -1;
            p += len + (p[len] == ',');
        }
        return 0;
    }
    if (!strcmp(key, "push_every"))
        return set_duration(&c->every_ns, value, PUSH_EVERY_MIN_NS, PUSH_EVERY_MAX_NS,
                            "from 1s to 60m", err, err_size);
    if (!strcmp(key, "push_timeout"))
        return set_duration(&c->timeout_ns, value, 100000000ull, 600000000000ull,
                            "from 100ms to 10m", err, err_size);
    if (!strcmp(key, "push_linger"))
        return set_duration(&c->linger_ns, value, 0, 3600000000000ull, "at most 60m", err,
                            err_size);
    if (!strcmp(key, "push_spool"))
        return set_path(c->spool, sizeof c->spool, value, err, err_size);
    if (!strcmp(key, "push_spool_max"))
        return set_size(&c->spool_max, value, PUSH_SPOOL_MAX_MIN, "at least 4KiB", err, err_size);
    if (!strcmp(key, "push_memory"))
        return set_size(&c->memory, value, PUSH_MEMORY_MIN, "at least 1MiB", err, err_size);
    if (!strcmp(key, "push_user")) {
        if (!value[0] || strchr(value, ':') || !printable_utf8(value, strlen(value)) ||
            copy(c->user, sizeof c->user, value, strlen(value)) < 0) {
            snprintf(err, err_size, "a user name is printable, without ':'");
            return -1;
        }
        return 0;
    }
    if (!strcmp(key, "push_password_file"))
        return set_path(c->password_file, sizeof c->password_file, value, err, err_size);
    if (!strcmp(key, "push_token_file"))
        return set_path(c->token_file, sizeof c->token_file, value, err, err_size);
    if (!strcmp(key, "push_headers_file"))
        return set_path(c->headers_file, sizeof c->headers_file, value, err, err_size);
    if (!strcmp(key, "push_ca"))
        return set_path(c->ca_file, sizeof c->ca_file, value, err, err_size);
    if (!strcmp(key, "push_tenant")) {
        if (!value[0] || !printable_utf8(value, strlen(value)) ||
            copy(c->tenant, sizeof c->tenant, value, strlen(value)) < 0) {
            snprintf(err, err_size, "a tenant is printable UTF-8");
            return -1;
        }
        return 0;
    }
    if (!strcmp(key, "push_headers") || !strcmp(key, "push_header"))
        return add_headers(c, value, err, err_size);
    snprintf(err, err_size, "unknown push setting '%s'", key);
    return -1;
}

int push_config_in_env(void)
{
    const char *v = getenv("CORSCOPE_PUSH");
    return v && v[0];
}

int push_config_check(const struct push_config *c, char *err, size_t err_size)
{
    const char *files[] = {c->password_file, c->token_file, c->headers_file, c->ca_file};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        if (files[i][0] && access(files[i], R_OK) != 0) {
            snprintf(err, err_size, "cannot read %s", files[i]);
            return -1;
        }
    }
    int password = c->password_file[0] || getenv(PUSH_PASSWORD_ENV);
    if (password && !c->user[0]) {
        snprintf(err, err_size, "a password without a user (set CORSCOPE_PUSH_USER or --push-user)");
        return -1;
    }
    if (c->user[0] && c->url.user[0]) {
        snprintf(err, err_size, "a user in the URL and another in the settings");
        return -1;
    }
    return 0;
}

/* Every variable (but CORSCOPE_PUSH when with_url is 0).  0 or -1. */
static int read_env(struct push_config *c, int with_url, char *err, size_t err_size)
{
    push_config_defaults(c);
    char why[256];
#define READ(k, env)                                                                     \
    do {                                                                                 \
        const char *v = getenv(env);                                                     \
        if ((with_url || strcmp(#k, "push")) && v && v[0] &&                             \
            push_config_set(c, #k, v, why, sizeof why) < 0) {                            \
            /* never a value back: it may be a secret */                                 \
            snprintf(err, err_size, "%s: %s", env, why);                                 \
            return -1;                                                                   \
        }                                                                                \
    } while (0);
    PUSH_KEYS(READ)
#undef READ
    return 0;
}

int push_config_settings_from_env(struct push_config *c, char *err, size_t err_size)
{
    return read_env(c, 0, err, err_size);
}

int push_config_from_env(struct push_config *c, char *err, size_t err_size)
{
    if (read_env(c, 1, err, err_size) < 0)
        return -1;
    char why[256];
    if (!c->url_text[0])
        return 0;
    if (push_config_check(c, why, sizeof why) < 0) {
        snprintf(err, err_size, "%s", why);
        return -1;
    }
    return 0;
}
