/*
 * Tests of ipc (cli/ipc.h): the diagnostics IPC encoding of AttachProfiler
 * against the layout seen on the real runtime, and the process info answer.
 */

#include "cli/ipc.h"
#include "test.h"

static void test_ipc_attach_layout(void)
{
    /* the request the experiment sent (trace_attach.md B5.3): a path of 43
     * UTF-16 units with its NUL, 28 bytes of client data: 162 bytes */
    static uint8_t msg[IPC_MESSAGE_MAX];
    const uint8_t clsid[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    const char *path = "/work/scratch/trace-lab/out/libtracelab.so"; /* 42 characters */
    REQUIRE(strlen(path) == 42);
    const char data[28] = "TL_OUT=/tmp/x;TL_DETACH=1;ab";
    long n = ipc_encode_attach(msg, sizeof msg, 5000, clsid, path, data, sizeof data);
    REQUIRE(n == 162);
    CHECK(!memcmp(msg, "DOTNET_IPC_V1\0", 14));
    CHECK_EQ(msg[14] | msg[15] << 8, 162);
    CHECK_EQ(msg[16], 0x03);
    CHECK_EQ(msg[17], 0x01);
    CHECK_EQ(msg[18] | msg[19] << 8, 0);
    CHECK_EQ(msg[20] | msg[21] << 8 | msg[22] << 16 | (uint32_t)msg[23] << 24, 5000);
    CHECK(!memcmp(msg + 24, clsid, 16));
    CHECK_EQ(msg[40], 43);           /* units, the NUL included */
    CHECK_EQ(msg[44], '/');          /* UTF-16LE */
    CHECK_EQ(msg[45], 0);
    CHECK_EQ(msg[44 + 2 * 42], 0);   /* the NUL */
    CHECK_EQ(msg[44 + 86], 28);      /* client data length */
    CHECK(!memcmp(msg + 44 + 90, data, 28));
    /* not UTF-8, or too big for one message: refused */
    CHECK(ipc_encode_attach(msg, sizeof msg, 0, clsid, "/a\xff", NULL, 0) == -1);
    static char big[70000];
    CHECK(ipc_encode_attach(msg, sizeof msg, 0, clsid, "/a", big, sizeof big) == -1);
    CHECK(ipc_encode(msg, 10, 4, 0, NULL, 0) == -1);
}

static size_t put_string(uint8_t *p, const char *s)
{
    uint32_t n = (uint32_t)strlen(s) + 1;
    memcpy(p, &n, 4);
    for (uint32_t i = 0; i < n; i++) {
        p[4 + 2 * i] = (uint8_t)s[i];
        p[5 + 2 * i] = 0;
    }
    return 4 + 2 * (size_t)n;
}

static void test_ipc_process_info(void)
{
    uint8_t p[1024];
    memset(p, 0, sizeof p);
    uint64_t pid = 4242;
    memcpy(p, &pid, 8);
    size_t at = 24;
    at += put_string(p + at, "dotnet /srv/App.dll");
    at += put_string(p + at, "Linux");
    at += put_string(p + at, "x64");
    size_t v1 = at;
    at += put_string(p + at, "App");
    at += put_string(p + at, "10.0.12");
    struct ipc_info info;
    REQUIRE(ipc_decode_info(p, at, 1, &info) == 0);
    CHECK_EQ(info.pid, 4242);
    CHECK(!strcmp(info.command, "dotnet /srv/App.dll"));
    CHECK_STR(info.arch, "x64");
    CHECK_STR(info.entry, "App");
    CHECK_STR(info.version, "10.0.12");
    REQUIRE(ipc_decode_info(p, v1, 0, &info) == 0);
    CHECK_STR(info.version, "");
    CHECK(ipc_decode_info(p, v1, 1, &info) == -1); /* version 2 fields missing */
    CHECK(ipc_decode_info(p, 30, 0, &info) == -1);
    /* a count past the end is refused, not read */
    uint32_t huge = 1000000;
    memcpy(p + 24, &huge, 4);
    CHECK(ipc_decode_info(p, at, 1, &info) == -1);
}

void suite_ipc(void)
{
    RUN(test_ipc_attach_layout);
    RUN(test_ipc_process_info);
}
