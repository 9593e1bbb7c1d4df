/*
 * http: see http.h.  The socket is non-blocking; every read, write and
 * handshake step waits in poll() for what is left of the request's time.
 */
#include "cli/http.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "common/mem.h"
#include "common/clock.h"
#include "common/units.h"

int http_base64(const void *in, size_t n, char *out, size_t size)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const uint8_t *p = in;
    size_t need = (n + 2) / 3 * 4 + 1;
    if (need > size)
        return -1;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
                     (i + 2 < n ? p[i + 2] : 0);
        out[o++] = alphabet[v >> 18 & 63];
        out[o++] = alphabet[v >> 12 & 63];
        out[o++] = i + 1 < n ? alphabet[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? alphabet[v & 63] : '=';
    }
    out[o] = '\0';
    return 0;
}

/* ---- proxies ------------------------------------------------------------- */

int http_no_proxy_match(const char *list, const char *host)
{
    size_t hl = strlen(host);
    for (const char *p = list; *p;) {
        p += strspn(p, " ,");
        size_t len = strcspn(p, ",");
        size_t n = len;
        while (n && p[n - 1] == ' ')
            n--;
        const char *entry = p;
        if (n && entry[0] == '.') { /* ".example.com": the same as "example.com" */
            entry++;
            n--;
        }
        if (n == 1 && entry[0] == '*')
            return 1;
        if (n && n <= hl && !strncasecmp(host + hl - n, entry, n) &&
            (n == hl || host[hl - n - 1] == '.'))
            return 1;
        p += len;
    }
    return 0;
}

int http_proxy_for(const struct push_url *u, struct http_proxy *proxy, char *err, size_t err_size)
{
    memset(proxy, 0, sizeof *proxy);
    const char *no = getenv("no_proxy");
    if (!no)
        no = getenv("NO_PROXY");
    if (no && http_no_proxy_match(no, u->host))
        return 0;
    /* as curl: http_proxy only in lower case (HTTP_PROXY may come from a
     * CGI request's header) */
    const char *names[3] = {u->https ? "https_proxy" : "http_proxy",
                            u->https ? "HTTPS_PROXY" : NULL, "all_proxy"};
    const char *value = NULL, *name = NULL;
    for (size_t i = 0; i < 3 && !value; i++) {
        if (names[i] && (value = getenv(names[i])) != NULL && !value[0])
            value = NULL;
        name = names[i];
    }
    if (!value && (value = getenv("ALL_PROXY")) != NULL && value[0])
        name = "ALL_PROXY";
    if (!value || !value[0])
        return 0;
    char text[1024];
    if (!strstr(value, "://"))
        snprintf(text, sizeof text, "http://%s", value);
    else
        snprintf(text, sizeof text, "%s", value);
    struct push_url pu;
    char why[160];
    if (push_url_parse(text, &pu, why, sizeof why) < 0) {
        snprintf(err, err_size, "%s: %s", name, why);
        return -1;
    }
    if (pu.https) {
        snprintf(err, err_size, "%s: an https:// proxy is not supported (use http://)", name);
        return -1;
    }
    proxy->set = 1;
    snprintf(proxy->host, sizeof proxy->host, "%s", pu.host);
    /* no port given: curl's default for proxies, 1080 */
    const char *authority = strstr(text, "://") + 3;
    size_t alen = strcspn(authority, "/");
    const char *at = memchr(authority, '@', alen);
    const char *hostpart = at ? at + 1 : authority;
    const char *closing = memchr(hostpart, ']', alen - (size_t)(hostpart - authority));
    const char *from = closing ? closing : hostpart;
    int explicit_port = memchr(from, ':', alen - (size_t)(from - authority)) != NULL;
    proxy->port = explicit_port ? pu.port : 1080;
    snprintf(proxy->user, sizeof proxy->user, "%s", pu.user);
    snprintf(proxy->password, sizeof proxy->password, "%s", pu.password);
    return 0;
}

/* ---- the connection -------------------------------------------------------- */

int http_client_init(struct http_client *c, const struct push_url *url, const char *ca_file,
                     char *err, size_t err_size)
{
    memset(c, 0, sizeof *c);
    c->fd = -1;
    c->url = *url;
    snprintf(c->ca_file, sizeof c->ca_file, "%s", ca_file ? ca_file : "");
    if (http_proxy_for(url, &c->proxy, err, err_size) < 0)
        return -1;
    if (!url->https)
        return 0;
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) {
        snprintf(err, err_size, "cannot set up TLS");
        return -1;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    /* a server that closes without close_notify still sent its answer */
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
    if (SSL_CTX_set_default_verify_paths(ctx) != 1 ||
        (c->ca_file[0] && SSL_CTX_load_verify_locations(ctx, c->ca_file, NULL) != 1)) {
        snprintf(err, err_size, "cannot load the CA certificates%s%s",
                 c->ca_file[0] ? " of " : "", c->ca_file);
        SSL_CTX_free(ctx);
        return -1;
    }
    c->ssl_ctx = ctx;
    return 0;
}

void http_client_close(struct http_client *c)
{
    if (c->ssl) {
        SSL_free(c->ssl);
        c->ssl = NULL;
    }
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

void http_client_free(struct http_client *c)
{
    http_client_close(c);
    if (c->ssl_ctx)
        SSL_CTX_free(c->ssl_ctx);
    memset(c, 0, sizeof *c);
    c->fd = -1;
}

/* Waits until fd is ready for `events` or the deadline passes.  0 or -1. */
static int wait_fd(int fd, short events, uint64_t deadline)
{
    for (;;) {
        uint64_t now = clock_now_ns();
        if (now >= deadline) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct pollfd p = {fd, events, 0};
        int ms = (int)((deadline - now + 999999) / 1000000);
        int n = poll(&p, 1, ms);
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return -1;
    }
}

static int tcp_connect(const char *host, unsigned port, uint64_t deadline, char *err,
                       size_t err_size)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    char service[16];
    snprintf(service, sizeof service, "%u", port);
    int rc = getaddrinfo(host, service, &hints, &res);
    if (rc != 0) {
        snprintf(err, err_size, "cannot resolve %s: %s", host, gai_strerror(rc));
        return -1;
    }
    int fd = -1, last = 0;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            last = errno;
            continue;
        }
        if (connect(fd, a->ai_addr, a->ai_addrlen) < 0 && errno != EINPROGRESS) {
            last = errno;
            close(fd);
            fd = -1;
            continue;
        }
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        if (wait_fd(fd, POLLOUT, deadline) < 0 ||
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr) {
            last = soerr ? soerr : errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        snprintf(err, err_size, "cannot connect to %s:%u: %s", host, port, strerror(last));
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* Writes all of it, on TLS when there is a session.  0 or -1. */
static int send_all(struct http_client *c, const void *data, size_t n, uint64_t deadline)
{
    const char *p = data;
    while (n) {
        ssize_t w;
        if (c->ssl) {
            ERR_clear_error();
            int k = SSL_write(c->ssl, p, (int)(n > (1u << 30) ? 1u << 30 : n));
            if (k <= 0) {
                int e = SSL_get_error(c->ssl, k);
                if ((e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) &&
                    wait_fd(c->fd, e == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN, deadline) == 0)
                    continue;
                return -1;
            }
            w = k;
        } else {
            w = send(c->fd, p, n, MSG_NOSIGNAL);
            if (w < 0) {
                if ((errno == EAGAIN || errno == EINTR) && wait_fd(c->fd, POLLOUT, deadline) == 0)
                    continue;
                return -1;
            }
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads what is there (at least a byte, waiting for it).  Returns the
 * count, 0 at the end of the stream, -1 on error or timeout. */
static ssize_t recv_some(struct http_client *c, void *out, size_t size, uint64_t deadline)
{
    for (;;) {
        if (c->ssl) {
            ERR_clear_error();
            int k = SSL_read(c->ssl, out, (int)(size > (1u << 30) ? 1u << 30 : size));
            if (k > 0)
                return k;
            int e = SSL_get_error(c->ssl, k);
            if (e == SSL_ERROR_ZERO_RETURN)
                return 0;
            if ((e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) &&
                wait_fd(c->fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline) == 0)
                continue;
            if (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0)
                return 0; /* closed without close_notify */
            return -1;
        }
        ssize_t k = recv(c->fd, out, size, 0);
        if (k >= 0)
            return k;
        if ((errno == EAGAIN || errno == EINTR) && wait_fd(c->fd, POLLIN, deadline) == 0)
            continue;
        return -1;
    }
}

/* The tunnel through the proxy to the server, for https. */
static int proxy_connect(struct http_client *c, uint64_t deadline, char *err, size_t err_size)
{
    char req[1024], auth[600] = "";
    if (c->proxy.user[0]) {
        char plain[400], b64[560];
        snprintf(plain, sizeof plain, "%s:%s", c->proxy.user, c->proxy.password);
        if (http_base64(plain, strlen(plain), b64, sizeof b64) == 0)
            snprintf(auth, sizeof auth, "Proxy-Authorization: Basic %s\r\n", b64);
        memset(plain, 0, sizeof plain);
    }
    int v6 = strchr(c->url.host, ':') != NULL;
    int n = snprintf(req, sizeof req, "CONNECT %s%s%s:%u HTTP/1.1\r\nHost: %s%s%s:%u\r\n%s\r\n",
                     v6 ? "[" : "", c->url.host, v6 ? "]" : "", c->url.port, v6 ? "[" : "",
                     c->url.host, v6 ? "]" : "", c->url.port, auth);
    memset(auth, 0, sizeof auth);
    if (n < 0 || (size_t)n >= sizeof req || send_all(c, req, (size_t)n, deadline) < 0) {
        memset(req, 0, sizeof req);
        snprintf(err, err_size, "cannot talk to the proxy %s:%u", c->proxy.host, c->proxy.port);
        return -1;
    }
    memset(req, 0, sizeof req);
    /* the answer's head, a byte at a time: nothing of the tunnel may be
     * read past it */
    char head[4096];
    size_t got = 0;
    while (got + 1 < sizeof head) {
        ssize_t k = recv_some(c, head + got, 1, deadline);
        if (k <= 0)
            break;
        got++;
        if (got >= 4 && !memcmp(head + got - 4, "\r\n\r\n", 4))
            break;
    }
    struct http_response rs;
    memset(&rs, 0, sizeof rs);
    uint64_t length;
    int chunked;
    if (got < 4 || memcmp(head + got - 4, "\r\n\r\n", 4) ||
        http_parse_head(head, got, &rs, &length, &chunked) < 0 || rs.status / 100 != 2) {
        if (rs.status)
            snprintf(err, err_size, "the proxy %s:%u refused the tunnel (status %d)",
                     c->proxy.host, c->proxy.port, rs.status);
        else
            snprintf(err, err_size, "the proxy %s:%u gave no answer to CONNECT", c->proxy.host,
                     c->proxy.port);
        return -1;
    }
    return 0;
}

/* The TLS handshake on the connected socket, the server's name and
 * certificate checked. */
static int tls_start(struct http_client *c, uint64_t deadline, char *err, size_t err_size)
{
    SSL *ssl = SSL_new(c->ssl_ctx);
    if (!ssl) {
        snprintf(err, err_size, "cannot set up TLS");
        return -1;
    }
    c->ssl = ssl;
    SSL_set_fd(ssl, c->fd);
    int is_ip = strchr(c->url.host, ':') || strspn(c->url.host, "0123456789.") == strlen(c->url.host);
    if (is_ip) {
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), c->url.host);
    } else {
        SSL_set_tlsext_host_name(ssl, c->url.host);
        SSL_set1_host(ssl, c->url.host);
    }
    for (;;) {
        ERR_clear_error();
        int k = SSL_connect(ssl);
        if (k == 1)
            return 0;
        int e = SSL_get_error(ssl, k);
        if ((e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) &&
            wait_fd(c->fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline) == 0)
            continue;
        long verify = SSL_get_verify_result(ssl);
        if (verify != X509_V_OK)
            snprintf(err, err_size, "TLS: the certificate of %s is not trusted: %s (CA bundle: "
                     "SSL_CERT_FILE, or --push-ca)", c->url.host,
                     X509_verify_cert_error_string(verify));
        else if (e == SSL_ERROR_SYSCALL && errno == ETIMEDOUT)
            snprintf(err, err_size, "TLS handshake with %s timed out", c->url.host);
        else {
            char why[160] = "";
            unsigned long code = ERR_peek_error();
            if (code)
                ERR_error_string_n(code, why, sizeof why);
            snprintf(err, err_size, "TLS handshake with %s failed%s%s", c->url.host,
                     why[0] ? ": " : "", why);
        }
        return -1;
    }
}

static int open_connection(struct http_client *c, uint64_t deadline, char *err, size_t err_size)
{
    http_client_close(c);
    const char *host = c->proxy.set ? c->proxy.host : c->url.host;
    unsigned port = c->proxy.set ? c->proxy.port : c->url.port;
    c->fd = tcp_connect(host, port, deadline, err, err_size);
    if (c->fd < 0)
        return -1;
    c->connects++;
    if (c->proxy.set && c->url.https && proxy_connect(c, deadline, err, err_size) < 0) {
        http_client_close(c);
        return -1;
    }
    if (c->url.https && tls_start(c, deadline, err, err_size) < 0) {
        http_client_close(c);
        return -1;
    }
    return 0;
}

/* ---- the exchange ------------------------------------------------------------ */

int http_parse_head(const char *head, size_t len, struct http_response *rs, uint64_t *length,
                    int *chunked)
{
    *length = UINT64_MAX;
    *chunked = 0;
    rs->keep_alive = 1;
    rs->retry_after_s = 0;
    rs->content_type[0] = '\0';
    const char *end = head + len;
    const char *eol = memchr(head, '\n', len);
    if (!eol || len < 12 || memcmp(head, "HTTP/1.", 7) != 0)
        return -1;
    if (head[7] == '0')
        rs->keep_alive = 0;
    int status = 0;
    for (const char *p = head + 9; p < head + 12; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        status = status * 10 + (*p - '0');
    }
    if (head[8] != ' ' || status < 100)
        return -1;
    rs->status = status;
    for (const char *line = eol + 1; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);
        if (n && line[n - 1] == '\r')
            n--;
        if (!n)
            break;
        const char *colon = memchr(line, ':', n);
        if (colon) {
            size_t kn = (size_t)(colon - line);
            const char *v = colon + 1;
            size_t vn = n - kn - 1;
            while (vn && (*v == ' ' || *v == '\t'))
                v++, vn--;
            while (vn && (v[vn - 1] == ' ' || v[vn - 1] == '\t'))
                vn--;
            char value[128];
            snprintf(value, sizeof value, "%.*s", (int)(vn < 127 ? vn : 127), v);
            if (kn == 14 && !strncasecmp(line, "Content-Length", 14)) {
                uint64_t cl;
                const char *why;
                if (units_parse_count(value, UINT64_MAX / 2, &cl, &why) < 0)
                    return -1;
                *length = cl;
            } else if (kn == 17 && !strncasecmp(line, "Transfer-Encoding", 17)) {
                *chunked = strcasestr(value, "chunked") != NULL;
            } else if (kn == 10 && !strncasecmp(line, "Connection", 10)) {
                if (strcasestr(value, "close"))
                    rs->keep_alive = 0;
                else if (strcasestr(value, "keep-alive"))
                    rs->keep_alive = 1;
            } else if (kn == 11 && !strncasecmp(line, "Retry-After", 11)) {
                uint64_t s;
                const char *why;
                if (units_parse_count(value, 86400, &s, &why) == 0)
                    rs->retry_after_s = s;
            } else if (kn == 12 && !strncasecmp(line, "Content-Type", 12)) {
                snprintf(rs->content_type, sizeof rs->content_type, "%s", value);
            }
        }
        if (!nl)
            break;
        line = nl + 1;
    }
    return 0;
}

/* Buffered reading of the response. */
struct reader {
    struct http_client *c;
    char data[16384];
    size_t pos, len;
    uint64_t deadline;
};

/* Something left to read in the buffer (waiting for it).  0 or -1. */
static int rd_fill(struct reader *r)
{
    if (r->pos < r->len)
        return 0;
    ssize_t k = recv_some(r->c, r->data, sizeof r->data, r->deadline);
    if (k <= 0)
        return -1;
    r->pos = 0;
    r->len = (size_t)k;
    return 0;
}

static int rd_byte(struct reader *r)
{
    return rd_fill(r) < 0 ? -1 : (unsigned char)r->data[r->pos++];
}

/* n bytes of body (kept up to the cap).  0 or -1. */
static int rd_body(struct reader *r, uint64_t n, struct buf *body)
{
    while (n) {
        if (rd_fill(r) < 0)
            return -1;
        size_t take = r->len - r->pos < n ? r->len - r->pos : (size_t)n;
        if (body->len + take <= HTTP_BODY_MAX)
            buf_put(body, r->data + r->pos, take);
        r->pos += take;
        n -= take;
    }
    return 0;
}

static int rd_line(struct reader *r, char *out, size_t size)
{
    size_t n = 0;
    for (;;) {
        int ch = rd_byte(r);
        if (ch < 0)
            return -1;
        if (ch == '\n')
            break;
        if (n + 1 < size)
            out[n++] = (char)ch;
    }
    if (n && out[n - 1] == '\r')
        n--;
    out[n] = '\0';
    return 0;
}

static int read_response(struct http_client *c, uint64_t deadline, struct http_response *rs,
                         char *err, size_t err_size)
{
    struct reader *r = mem_alloc(sizeof *r);
    char *head = mem_alloc(HTTP_BODY_MAX);
    int rc = -1;
    if (!r || !head) {
        snprintf(err, err_size, "out of memory");
        goto out;
    }
    r->c = c;
    r->pos = r->len = 0;
    r->deadline = deadline;
    uint64_t length;
    int chunked;
    for (;;) { /* 1xx answers come before the real one */
        size_t got = 0;
        while (got < 4 || memcmp(head + got - 4, "\r\n\r\n", 4)) {
            int ch = rd_byte(r);
            if (ch < 0 || got + 1 >= HTTP_BODY_MAX) {
                snprintf(err, err_size, "%s", ch < 0 ? (errno == ETIMEDOUT ? "no answer in time"
                                                                            : "the connection closed")
                                                     : "response head too long");
                goto out;
            }
            head[got++] = (char)ch;
        }
        if (http_parse_head(head, got, rs, &length, &chunked) < 0) {
            snprintf(err, err_size, "a response that is not HTTP/1.x");
            goto out;
        }
        if (rs->status >= 200)
            break;
    }
    if (chunked) {
        for (;;) {
            char line[128];
            if (rd_line(r, line, sizeof line) < 0)
                goto cut;
            uint64_t size = strtoull(line, NULL, 16);
            if (size == 0) {
                while (rd_line(r, line, sizeof line) == 0 && line[0]) {
                }
                break;
            }
            if (rd_body(r, size, &rs->body) < 0 || rd_line(r, line, sizeof line) < 0)
                goto cut;
        }
    } else if (length != UINT64_MAX) {
        if (rd_body(r, length, &rs->body) < 0)
            goto cut;
    } else if (rs->status != 204 && rs->status != 304) {
        /* to the end of the stream */
        rs->keep_alive = 0;
        while (rd_byte(r) >= 0)
            if (rs->body.len < HTTP_BODY_MAX)
                buf_put(&rs->body, &r->data[r->pos - 1], 1);
    }
    if (r->pos != r->len)
        rs->keep_alive = 0; /* more than one answer: do not trust the line */
    rc = 0;
    goto out;
cut:
    snprintf(err, err_size, "the response was cut short");
out:
    mem_free(r);
    mem_free(head);
    return rc;
}

int http_post(struct http_client *c, const char *path, const char *content_type,
              const char *headers, const void *body, size_t len, uint64_t timeout_ns,
              struct http_response *rs, char *err, size_t err_size)
{
    memset(rs, 0, sizeof *rs);
    buf_init(&rs->body);
    uint64_t deadline = clock_now_ns() + timeout_ns;
    struct buf req;
    buf_init(&req);
    char line[1400];
    int v6 = strchr(c->url.host, ':') != NULL;
    char hostport[300];
    int default_port = c->url.port == (c->url.https ? 443u : 80u);
    snprintf(hostport, sizeof hostport, "%s%s%s", v6 ? "[" : "", c->url.host, v6 ? "]" : "");
    if (!default_port) {
        size_t hl = strlen(hostport);
        snprintf(hostport + hl, sizeof hostport - hl, ":%u", c->url.port);
    }
    /* through a proxy, plain http asks for the whole URL */
    if (c->proxy.set && !c->url.https)
        snprintf(line, sizeof line, "POST http://%s%s%s HTTP/1.1\r\n", hostport, c->url.path, path);
    else
        snprintf(line, sizeof line, "POST %s%s HTTP/1.1\r\n", c->url.path, path);
    buf_put(&req, line, strlen(line));
    snprintf(line, sizeof line, "Host: %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n",
             hostport, content_type, len);
    buf_put(&req, line, strlen(line));
    if (c->proxy.set && !c->url.https && c->proxy.user[0]) {
        char plain[400], b64[560];
        snprintf(plain, sizeof plain, "%s:%s", c->proxy.user, c->proxy.password);
        if (http_base64(plain, strlen(plain), b64, sizeof b64) == 0) {
            buf_put(&req, "Proxy-Authorization: Basic ", 27);
            buf_put(&req, b64, strlen(b64));
            buf_put(&req, "\r\n", 2);
        }
        memset(plain, 0, sizeof plain);
        memset(b64, 0, sizeof b64);
    }
    for (const char *h = headers ? headers : ""; *h;) {
        size_t n = strcspn(h, "\n");
        buf_put(&req, h, n);
        buf_put(&req, "\r\n", 2);
        h += n + (h[n] == '\n');
    }
    buf_put(&req, "\r\n", 2);
    if (req.failed) {
        buf_free(&req);
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    int rc = -1;
    /* a kept connection the server has meanwhile closed fails at once:
     * then one more try on a new one */
    for (int attempt = 0; attempt < 2 && rc < 0; attempt++) {
        int reused = c->fd >= 0;
        if (!reused && open_connection(c, deadline, err, err_size) < 0)
            break;
        if (send_all(c, req.data, req.len, deadline) < 0 || send_all(c, body, len, deadline) < 0) {
            snprintf(err, err_size, "cannot send: %s",
                     errno == ETIMEDOUT ? "timed out" : "the connection broke");
            http_client_close(c);
            if (reused)
                continue;
            break;
        }
        buf_reset(&rs->body);
        if (read_response(c, deadline, rs, err, err_size) < 0) {
            http_client_close(c);
            if (reused && !rs->status && errno != ETIMEDOUT)
                continue;
            break;
        }
        rc = 0;
    }
    /* the request held the headers, secrets among them */
    memset(req.data, 0, req.cap);
    buf_free(&req);
    if (rc == 0 && !rs->keep_alive)
        http_client_close(c);
    return rc;
}

void http_response_free(struct http_response *rs)
{
    buf_free(&rs->body);
}
