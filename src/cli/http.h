/*
 * http: the small HTTP/1.1 client the uploads go through: POST a body,
 * read the status, the headers that matter and a bounded body; over TCP or
 * TLS (OpenSSL: the library the .NET runtime itself needs on Linux, so it
 * is there wherever the program runs), directly or through a proxy from
 * the environment (http_proxy, https_proxy, all_proxy, no_proxy, as curl
 * reads them: a CONNECT tunnel for https, an absolute URI for http).
 *
 * TLS verifies the server's certificate against the system's CA bundle
 * (OpenSSL's default paths; SSL_CERT_FILE and SSL_CERT_DIR move them) and
 * an optional extra CA file, and its name against the URL's host; there
 * is no way to turn verification off.  One connection is kept alive
 * between requests (a handshake per window would cost more than the
 * upload), and opened again when the server closed it.
 *
 * Every wait is bounded by the request's timeout.  Nothing here prints:
 * failures come back as one line for the caller to say, never with a
 * header's value in it (they may carry secrets).
 */
#ifndef CORSCOPE_CLI_HTTP_H
#define CORSCOPE_CLI_HTTP_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/pushcfg.h"
#include "common/visibility.h"

struct http_proxy {
    int set;
    char host[256];
    unsigned port;
    char user[128], password[256];
};

struct http_client {
    struct push_url url;        /* where requests go */
    char ca_file[PATH_MAX];     /* "" = the system's bundle only */
    struct http_proxy proxy;    /* from the environment */
    int fd;                     /* -1 when not connected */
    void *ssl_ctx, *ssl;        /* SSL_CTX, SSL; NULL for http */
    uint64_t connects;          /* connections opened (keep-alive shows) */
};

struct http_response {
    int status;
    int keep_alive;
    uint64_t retry_after_s; /* 0 = none */
    char content_type[128];
    struct buf body;        /* at most HTTP_BODY_MAX bytes of it */
};

#define HTTP_BODY_MAX (64u << 10)

/* The proxy the environment names for a URL (no_proxy honoured).
 * Returns 0 (proxy->set says whether there is one), or -1 with the reason
 * when the variable is malformed. */
HIDDEN int http_proxy_for(const struct push_url *u, struct http_proxy *proxy, char *err,
                          size_t err_size);
/* Does a no_proxy list exempt host? */
HIDDEN int http_no_proxy_match(const char *list, const char *host);
HIDDEN int http_client_init(struct http_client *c, const struct push_url *url, const char *ca_file,
                            char *err, size_t err_size);
HIDDEN void http_client_close(struct http_client *c);
HIDDEN void http_client_free(struct http_client *c);
/* POSTs body to the URL's path + `path`, with `headers` ("Name: value"
 * lines, each ending in \n) besides Host, Content-Length and Content-Type.
 * Returns 0 with the response filled (whatever its status), or -1 with
 * the reason the exchange failed (refused, timed out, TLS ...).  The
 * response's body is freed by http_response_free. */
HIDDEN int http_post(struct http_client *c, const char *path, const char *content_type,
                     const char *headers, const void *body, size_t len, uint64_t timeout_ns,
                     struct http_response *rs, char *err, size_t err_size);
HIDDEN void http_response_free(struct http_response *rs);
/* Parses a response head (status line and headers, up to the empty line)
 * into rs and the body's framing: *length (UINT64_MAX when not given),
 * *chunked.  Returns 0 or -1.  Exposed for the tests and the fuzzer. */
HIDDEN int http_parse_head(const char *head, size_t len, struct http_response *rs,
                           uint64_t *length, int *chunked);
/* Base64 of n bytes into out (NUL-terminated); -1 when it does not fit. */
HIDDEN int http_base64(const void *in, size_t n, char *out, size_t size);

#endif
