/*
 * status: see status.h.
 */
#include "cli/status.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* The region to give back if a signal ends corscope while it is set. */
static volatile sig_atomic_t region_set;

static void put(const char *text, size_t len)
{
    while (len) {
        ssize_t w = write(STDERR_FILENO, text, len);
        if (w <= 0)
            return;
        text += w;
        len -= (size_t)w;
    }
}

static int terminal_rows(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row >= 3)
        return ws.ws_row;
    return 0;
}

/* Rows 1..rows-1 scroll; the cursor stays where the program's output is. */
static void set_region(int rows)
{
    char seq[64];
    int n = snprintf(seq, sizeof seq, "\0337\033[1;%dr\0338", rows - 1);
    put(seq, (size_t)n);
    region_set = 1;
}

static void reset_region_now(void)
{
    /* whole screen scrolls again; the status row is erased */
    static const char seq[] = "\0337\033[r\0338\0337\033[999;1H\033[2K\0338";
    put(seq, sizeof seq - 1);
    region_set = 0;
}

static void on_fatal_signal(int sig)
{
    if (region_set)
        reset_region_now();
    signal(sig, SIG_DFL);
    raise(sig);
}

void status_begin(struct status *s, enum status_style style, int quiet)
{
    memset(s, 0, sizeof *s);
    const char *term = getenv("TERM");
    if (quiet || !isatty(STDERR_FILENO) || !term || !strcmp(term, "dumb"))
        return;
    s->on = 1;
    s->style = style;
    if (style != STATUS_BOTTOM_ROW)
        return;
    int rows = terminal_rows();
    if (!rows) {
        /* a terminal of unknown size: a line in place would be mixed into
         * the program's output, so none */
        s->on = 0;
        return;
    }
    /* a new line first, so that the row the region gives up is not the
     * one the cursor is on */
    put("\n\033[1A", 5);
    set_region(rows);
    s->rows = rows;
    static const int fatal[] = {SIGQUIT, SIGABRT, SIGSEGV, SIGBUS};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
        struct sigaction old;
        if (sigaction(fatal[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
            signal(fatal[i], on_fatal_signal);
    }
}

static void human_bytes(uint64_t b, char *out, size_t size)
{
    if (b < 1024)
        snprintf(out, size, "%llu B", (unsigned long long)b);
    else if (b < 1024 * 1024)
        snprintf(out, size, "%.1f KiB", (double)b / 1024);
    else if (b < 1024ull * 1024 * 1024)
        snprintf(out, size, "%.1f MiB", (double)b / (1024.0 * 1024));
    else
        snprintf(out, size, "%.2f GiB", (double)b / (1024.0 * 1024 * 1024));
}

void status_format(char *out, size_t size, uint64_t elapsed_ns, const struct control_counts *c,
                   const char *note)
{
    uint64_t s = elapsed_ns / 1000000000ull;
    char elapsed[32], bytes[32];
    if (s >= 3600)
        snprintf(elapsed, sizeof elapsed, "%llu:%02llu:%02llu", (unsigned long long)(s / 3600),
                 (unsigned long long)(s / 60 % 60), (unsigned long long)(s % 60));
    else
        snprintf(elapsed, sizeof elapsed, "%llu:%02llu", (unsigned long long)(s / 60),
                 (unsigned long long)(s % 60));
    human_bytes(c->bytes, bytes, sizeof bytes);
    snprintf(out, size, "corscope: %s  %llu samples  %llu events  %llu dropped  %s%s%s", elapsed,
             (unsigned long long)c->samples, (unsigned long long)c->events,
             (unsigned long long)c->dropped, bytes, note ? "  " : "", note ? note : "");
}

void status_draw(struct status *s, uint64_t elapsed_ns, const struct control_counts *c,
                 const char *note)
{
    if (!s->on)
        return;
    char text[256], seq[400];
    status_format(text, sizeof text, elapsed_ns, c, note);
    int n;
    if (s->style == STATUS_BOTTOM_ROW) {
        int rows = terminal_rows();
        if (rows && rows != s->rows) {
            /* resized: the region follows, the old status row is cleared */
            put("\0337\033[r\0338", 7);
            put("\n\033[1A", 5);
            set_region(rows);
            s->rows = rows;
        }
        n = snprintf(seq, sizeof seq, "\0337\033[%d;1H\033[2K\033[7m%s\033[0m\0338", s->rows, text);
    } else {
        n = snprintf(seq, sizeof seq, "\r\033[2K%s", text);
    }
    if (n > 0)
        put(seq, (size_t)n < sizeof seq ? (size_t)n : sizeof seq - 1);
    s->drawn = 1;
}

void status_clear(struct status *s)
{
    if (!s->on || !s->drawn)
        return;
    if (s->style == STATUS_BOTTOM_ROW) {
        char seq[64];
        int n = snprintf(seq, sizeof seq, "\0337\033[%d;1H\033[2K\0338", s->rows);
        put(seq, (size_t)n);
    } else {
        put("\r\033[2K", 5);
    }
    s->drawn = 0;
}

void status_end(struct status *s)
{
    if (!s->on)
        return;
    status_clear(s);
    if (s->style == STATUS_BOTTOM_ROW)
        reset_region_now();
    s->on = 0;
}
