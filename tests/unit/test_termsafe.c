/*
 * Tests of termsafe (cli/termsafe.h): text from other processes made safe
 * for a terminal (issue 20.5: an agent's log line, escape sequences and
 * all, was printed on root's terminal): controls and bad UTF-8 escaped,
 * and a cut never splits an escape or a character.
 */
#include "cli/termsafe.h"
#include "test.h"

static void test_termsafe(void)
{
    char out[64];
    CHECK_STR(termsafe("plain text, été, 名前", out, sizeof out), "plain text, été, 名前");
    CHECK_STR(termsafe("a\x1b[31mb\x07\x7f", out, sizeof out), "a\\x1b[31mb\\x07\\x7f");
    CHECK_STR(termsafe("\xc2\x9b" "2J \xe2\x80\xae" "abc", out, sizeof out), "\\u009b2J \\u202eabc");
    CHECK_STR(termsafe("bad \xff\xc3 \xe0\x80\x80 end", out, sizeof out),
              "bad \\xff\\xc3 \\xe0\\x80\\x80 end");
    CHECK_STR(termsafe("line\nnext\r", out, sizeof out), "line\\x0anext\\x0d");
    /* cut whole: never half an escape or a character */
    CHECK_STR(termsafe("abc\x1b", out, 7), "abc");
    CHECK_STR(termsafe("ab\xc3\xa9", out, 4), "ab");
    CHECK_STR(termsafe("ab\xc3\xa9", out, 5), "ab\xc3\xa9");
}

void suite_termsafe(void)
{
    RUN(test_termsafe);
}
