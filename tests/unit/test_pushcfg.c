/*
 * pushcfg: the settings of the uploads to Pyroscope: URLs, labels,
 * headers (no header smuggled in, no secret echoed), durations and sizes,
 * the environment's variables (record --push never reads CORSCOPE_PUSH).
 */
#include <stdlib.h>
#include <string.h>

#include "common/pushcfg.h"
#include "test.h"

static void test_push_url(void)
{
    struct push_url u;
    char err[200], shown[600];
    REQUIRE(push_url_parse("https://pyro.example:4443/prefix/", &u, err, sizeof err) == 0);
    CHECK(u.https);
    CHECK(!strcmp(u.host, "pyro.example"));
    CHECK_EQ(u.port, 4443);
    CHECK(!strcmp(u.path, "/prefix"));
    REQUIRE(push_url_parse("http://alice:s3cret@[::1]", &u, err, sizeof err) == 0);
    CHECK(!strcmp(u.host, "::1"));
    CHECK_EQ(u.port, 80);
    CHECK(!strcmp(u.user, "alice"));
    CHECK(!strcmp(u.password, "s3cret"));
    push_url_display(&u, shown, sizeof shown);
    CHECK(!strcmp(shown, "http://[::1]:80"));
    CHECK(!strstr(shown, "s3cret") && !strstr(shown, "alice"));
    CHECK(push_url_parse("ftp://x", &u, err, sizeof err) < 0);
    CHECK(push_url_parse("http://x/push?a=b", &u, err, sizeof err) < 0);
    CHECK(push_url_parse("http://:80", &u, err, sizeof err) < 0);
    CHECK(push_url_parse("http://x:99999", &u, err, sizeof err) < 0);
    CHECK(push_url_parse("http://ex ample", &u, err, sizeof err) < 0);
}

static void test_push_settings(void)
{
    struct push_config c;
    char err[300];
    push_config_defaults(&c);
    CHECK_EQ(c.every_ns, 15000000000ull);
    REQUIRE(push_config_set(&c, "labels", "env=prod,region=eu-west", err, sizeof err) == 0);
    REQUIRE(push_config_set(&c, "label", "env=staging", err, sizeof err) == 0);
    CHECK_EQ(c.label_count, 2);
    CHECK(!strcmp(c.label_values[0], "staging")); /* the later one wins */
    CHECK(push_config_set(&c, "label", "__name__=x", err, sizeof err) < 0);
    CHECK(push_config_set(&c, "label", "service_name=x", err, sizeof err) < 0);
    CHECK(push_config_set(&c, "label", "9lives=x", err, sizeof err) < 0);
    CHECK(push_config_set(&c, "label", "a-b=x", err, sizeof err) < 0);
    CHECK(push_config_set(&c, "label", "k8s.pod=x", err, sizeof err) == 0);
    CHECK(push_config_set(&c, "label", "empty=", err, sizeof err) < 0);
    CHECK(push_config_set(&c, "push_every", "500ms", err, sizeof err) < 0);
    CHECK(push_config_set(&c, "push_every", "1s", err, sizeof err) == 0);
    CHECK(push_config_set(&c, "push_spool_max", "1KiB", err, sizeof err) < 0);
    /* a header may not smuggle a second one in, nor replace ours */
    CHECK(push_config_set(&c, "push_header", "X-A: 1\r\nX-B: 2", err, sizeof err) == 0);
    CHECK(!strcmp(c.headers, "X-A: 1\nX-B: 2\n"));
    CHECK(push_config_set(&c, "push_header", "X-C: a\rb", err, sizeof err) < 0);
    CHECK(push_config_set(&c, "push_header", "Content-Length: 0", err, sizeof err) < 0);
    CHECK(push_config_set(&c, "push_header", "Bad Name: 0", err, sizeof err) < 0);
    /* secrets never come back in a message */
    CHECK(push_config_set(&c, "push_header", "Authorization hunter2", err, sizeof err) < 0);
    CHECK(!strstr(err, "hunter2"));
    /* a password needs a user */
    push_config_defaults(&c);
    REQUIRE(push_config_set(&c, "push", "http://h", err, sizeof err) == 0);
    REQUIRE(push_config_set(&c, "push_password_file", "/dev/null", err, sizeof err) == 0);
    CHECK(push_config_check(&c, err, sizeof err) < 0);
    REQUIRE(push_config_set(&c, "push_user", "bob", err, sizeof err) == 0);
    CHECK(push_config_check(&c, err, sizeof err) == 0);
}

static void test_push_settings_env(void)
{
    struct push_config c;
    char err[300];
    unsetenv("CORSCOPE_PUSH");
    REQUIRE(push_config_from_env(&c, err, sizeof err) == 0);
    CHECK(!c.url_text[0]);
    CHECK(!push_config_in_env());
    setenv("CORSCOPE_PUSH", "http://127.0.0.1:4040", 1);
    setenv("CORSCOPE_LABELS", "env=prod,bad name=x", 1);
    CHECK(push_config_from_env(&c, err, sizeof err) < 0);
    CHECK(strstr(err, "CORSCOPE_LABELS") != NULL);
    setenv("CORSCOPE_LABELS", "env=prod", 1);
    setenv("CORSCOPE_PUSH_EVERY", "2s", 1);
    REQUIRE(push_config_from_env(&c, err, sizeof err) == 0);
    CHECK(push_config_in_env());
    CHECK_EQ(c.every_ns, 2000000000ull);
    CHECK_EQ(c.url.port, 4040);
    /* record --push reads the settings, never the URL (a bad one is no
     * business of a record that does not push) */
    setenv("CORSCOPE_PUSH", "ftp://nowhere", 1);
    CHECK(push_config_from_env(&c, err, sizeof err) < 0);
    REQUIRE(push_config_settings_from_env(&c, err, sizeof err) == 0);
    CHECK(!c.url_text[0]);
    CHECK_EQ(c.every_ns, 2000000000ull);
    unsetenv("CORSCOPE_PUSH");
    unsetenv("CORSCOPE_LABELS");
    unsetenv("CORSCOPE_PUSH_EVERY");
}

void suite_pushcfg(void)
{
    RUN(test_push_url);
    RUN(test_push_settings);
    RUN(test_push_settings_env);
}
