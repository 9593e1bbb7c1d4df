/*
 * synth: writes a synthetic recording for the report-speed benchmark: N
 * samples over S distinct stacks (depth 10 to 40, drawn from a pool of
 * 5000 method names that share prefixes the way real call trees do) on 8
 * threads, through the agent's own writer, so the file is what a long
 * real run would produce.
 *
 *   synth OUT.corscope [SAMPLES] [STACKS]   (default 1000000 100000)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/writer.h"

static int fd_write(void *ctx, const void *p, size_t n)
{
    int fd = *(int *)ctx;
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: synth OUT.corscope [SAMPLES] [STACKS]\n");
        return 2;
    }
    size_t samples = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000000;
    size_t stacks = argc > 3 ? strtoul(argv[3], NULL, 10) : 100000;
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    struct writer w;
    struct writer_sink sink = {fd_write, &fd};
    if (writer_begin(&w, sink) < 0)
        return 1;
    writer_info(&w, "command", "synth");
    writer_info(&w, "event", "cpu");
    writer_event(&w, 1, "cpu", "ns", 10000000);
    enum { NAMES = 5000, THREADS = 8, MAX_DEPTH = 40 };
    uint32_t *frame = malloc(NAMES * sizeof *frame);
    uint32_t *stack_id = malloc(stacks * sizeof *stack_id);
    if (!frame || !stack_id)
        return 1;
    uint32_t module = writer_string(&w, "Synth.dll", 9);
    for (uint32_t i = 0; i < NAMES; i++) {
        char type[64], name[64];
        int tl = snprintf(type, sizeof type, "Synth.Namespace%u.Type%u", i % 50, i % 400);
        int nl = snprintf(name, sizeof name, "Method%u", i);
        frame[i] = writer_frame(&w, FMT_FRAME_MANAGED, module, writer_string(&w, type, (size_t)tl),
                              writer_string(&w, name, (size_t)nl), 0);
    }
    for (uint32_t t = 0; t < THREADS; t++) {
        char name[32];
        int n = snprintf(name, sizeof name, "worker-%u", t);
        writer_thread(&w, t + 1, 1000 + t, writer_string(&w, name, (size_t)n));
    }
    /* stacks: a root-side prefix shared by many (a tree), then random tails */
    uint32_t f[MAX_DEPTH];
    for (size_t s = 0; s < stacks; s++) {
        uint32_t depth = 10 + next(MAX_DEPTH - 10);
        for (uint32_t d = 0; d < depth; d++) {
            /* frames near the root vary little, near the leaf a lot */
            uint32_t spread = d < 3 ? 4 : d < 8 ? 40 : NAMES;
            f[depth - 1 - d] = frame[(d * 97 + next(spread)) % NAMES];
        }
        stack_id[s] = writer_stack(&w, f, depth);
        if (writer_pending(&w) > (1u << 20))
            writer_flush(&w);
    }
    uint64_t time = 0;
    for (size_t i = 0; i < samples; i++) {
        /* a skewed choice: some stacks are hot */
        size_t s = next(4) == 0 ? next((uint32_t)(stacks < 1000 ? stacks : 1000)) : next((uint32_t)stacks);
        time += 10000000 / THREADS;
        writer_sample(&w, 1, 1 + (uint32_t)(i % THREADS), time, stack_id[s], 1 + next(3) / 2);
        if (writer_pending(&w) > (1u << 20))
            writer_flush(&w);
    }
    const char *keys[] = {"samples"};
    uint64_t values[] = {samples};
    int rc = writer_finish(&w, keys, values, 1);
    writer_free(&w);
    free(frame);
    free(stack_id);
    if (rc < 0 || close(fd) < 0) {
        perror(argv[1]);
        return 1;
    }
    return 0;
}
