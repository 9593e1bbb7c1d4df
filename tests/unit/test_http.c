/*
 * http: response heads, the proxies of the environment (no_proxy, curl's
 * rules), base64.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/http.h"
#include "test.h"

static void test_http_head(void)
{
    struct http_response rs;
    memset(&rs, 0, sizeof rs);
    uint64_t length;
    int chunked;
    const char *ok = "HTTP/1.1 200 OK\r\nContent-Type: application/proto\r\ncontent-length: 0\r\n\r\n";
    REQUIRE(http_parse_head(ok, strlen(ok), &rs, &length, &chunked) == 0);
    CHECK_EQ(rs.status, 200);
    CHECK_EQ(length, 0);
    CHECK(!chunked && rs.keep_alive);
    CHECK_STR(rs.content_type, "application/proto");
    const char *busy = "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 7\r\nConnection: close\r\n"
                       "Transfer-Encoding: chunked\r\n\r\n";
    REQUIRE(http_parse_head(busy, strlen(busy), &rs, &length, &chunked) == 0);
    CHECK_EQ(rs.status, 503);
    CHECK_EQ(rs.retry_after_s, 7);
    CHECK(chunked && !rs.keep_alive && length == UINT64_MAX);
    const char *old = "HTTP/1.0 401 Unauthorized\r\n\r\n";
    REQUIRE(http_parse_head(old, strlen(old), &rs, &length, &chunked) == 0);
    CHECK(!rs.keep_alive);
    CHECK(http_parse_head("SSH-2.0-OpenSSH\r\n\r\n", 19, &rs, &length, &chunked) < 0);
    CHECK(http_parse_head("HTTP/1.1 2x0 OK\r\n\r\n", 19, &rs, &length, &chunked) < 0);
    const char *bad_len = "HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n";
    CHECK(http_parse_head(bad_len, strlen(bad_len), &rs, &length, &chunked) < 0);
}

static void test_http_proxy_env(void)
{
    CHECK(http_no_proxy_match("localhost,.internal, example.com", "pyro.internal"));
    CHECK(http_no_proxy_match("localhost,.internal, example.com", "EXAMPLE.com"));
    CHECK(http_no_proxy_match("localhost,.internal, example.com", "a.example.com"));
    CHECK(!http_no_proxy_match("localhost,.internal, example.com", "badexample.com"));
    CHECK(http_no_proxy_match("*", "anything"));
    CHECK(!http_no_proxy_match("", "anything"));
    struct push_url u;
    char err[200];
    struct http_proxy p;
    REQUIRE(push_url_parse("https://pyro.example", &u, err, sizeof err) == 0);
    unsetenv("no_proxy");
    unsetenv("NO_PROXY");
    unsetenv("all_proxy");
    unsetenv("ALL_PROXY");
    unsetenv("http_proxy");
    setenv("https_proxy", "http://u:pw@proxy.lan:3128", 1);
    REQUIRE(http_proxy_for(&u, &p, err, sizeof err) == 0);
    CHECK(p.set);
    CHECK(!strcmp(p.host, "proxy.lan"));
    CHECK_EQ(p.port, 3128);
    CHECK(!strcmp(p.user, "u"));
    setenv("https_proxy", "proxy.lan", 1);
    REQUIRE(http_proxy_for(&u, &p, err, sizeof err) == 0);
    CHECK_EQ(p.port, 1080); /* curl's default */
    setenv("no_proxy", "ample", 1);
    REQUIRE(http_proxy_for(&u, &p, err, sizeof err) == 0);
    CHECK(p.set); /* "ample" is not a suffix of the name's labels */
    setenv("no_proxy", "pyro.example", 1);
    REQUIRE(http_proxy_for(&u, &p, err, sizeof err) == 0);
    CHECK(!p.set);
    unsetenv("no_proxy");
    setenv("https_proxy", "https://proxy.lan", 1);
    CHECK(http_proxy_for(&u, &p, err, sizeof err) < 0);
    unsetenv("https_proxy");
    /* plain http ignores HTTP_PROXY, as curl does */
    REQUIRE(push_url_parse("http://pyro.example", &u, err, sizeof err) == 0);
    setenv("HTTP_PROXY", "http://proxy.lan:3128", 1);
    REQUIRE(http_proxy_for(&u, &p, err, sizeof err) == 0);
    CHECK(!p.set);
    unsetenv("HTTP_PROXY");
    char b64[64];
    REQUIRE(http_base64("user:pass", 9, b64, sizeof b64) == 0);
    CHECK_STR(b64, "dXNlcjpwYXNz");
    REQUIRE(http_base64("ab", 2, b64, sizeof b64) == 0);
    CHECK_STR(b64, "YWI=");
    CHECK(http_base64("abcdef", 6, b64, 8) < 0);
}

void suite_http(void)
{
    RUN(test_http_head);
    RUN(test_http_proxy_env);
}
