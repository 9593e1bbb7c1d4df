/*
 * fuzz_push: what continuous profiling reads from outside (docs/push.md):
 *   - a recording read as a stream (cli/pstream.c, pdefs.c, pwindow.c):
 *     bytes fed in pieces of a size the input's first byte picks, windows
 *     made by the data's clock under a small memory budget (so that
 *     definitions are forgotten along the way), each window made into a
 *     push request (cli/pushreq.c: the reader, the aggregate and the pprof
 *     encoder over it);
 *   - an HTTP response head, when the input starts with "HTTP/" (the
 *     server's answer, cli/http.c).
 * A damaged stream must stop with a reason; nothing may crash, read out of
 * bounds or leak.  Seeds: the reader's recordings and a few answers.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cli/http.h"
#include "cli/pstream.h"
#include "cli/pushreq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void head(const uint8_t *data, size_t size)
{
    struct http_response rs;
    memset(&rs, 0, sizeof rs);
    uint64_t length;
    int chunked;
    http_parse_head((const char *)data, size, &rs, &length, &chunked);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 5 && !memcmp(data, "HTTP/", 5)) {
        head(data, size);
        return 0;
    }
    if (!size || size > (4u << 20))
        return 0;
    size_t piece = 1 + (size_t)data[0] * 37;
    data++;
    size--;
    struct pstream s;
    if (pstream_init(&s, 1000000000ull) < 0)
        return 0;
    s.defs.budget = s.defs.threshold = 4096;
    struct push_config c;
    push_config_defaults(&c);
    struct pushreq_labels labels;
    int have_labels = 0;
    for (size_t at = 0;; at += piece) {
        size_t n = at < size ? (size - at < piece ? size - at : piece) : 0;
        if (n && pstream_feed(&s, data + at, n) < 0)
            break;
        int end = at + n >= size;
        struct pstream_window w;
        while (pstream_next_window(&s, s.start_mono_ns + s.last_time, end, &w) == 1) {
            if (!have_labels) {
                pushreq_labels(&c, &s, &labels);
                have_labels = 1;
            }
            struct buf body;
            buf_init(&body);
            char err[300];
            pushreq_build(&w, &labels, &body, err, sizeof err);
            buf_free(&body);
            pstream_window_free(&w);
        }
        if (end)
            break;
    }
    pstream_free(&s);
    return 0;
}
