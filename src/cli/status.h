/*
 * status: the live status line of a recording on a terminal (elapsed
 * time, samples, events, drops, the recording's size), redrawn in place
 * on stderr, and gone when the recording ends.  Nothing is drawn when
 * stderr is not a terminal (or TERM is dumb, or -q).
 *
 * Attached, nothing else writes to the terminal: the line is redrawn with
 * a carriage return and an erase.  Launched, the program writes to the same
 * terminal whenever it likes, so the line lives on the terminal's last row,
 * outside a scrolling region that holds everything else (as apt's progress
 * bar does): the program's output scrolls above it and is never mixed into
 * it.  Each redraw is one write(2), which a terminal takes whole, between
 * the program's writes.  The region is given back at the end, and on the
 * signals that end corscope while it is drawn.
 */
#ifndef CORSCOPE_STATUS_H
#define CORSCOPE_STATUS_H

#include <stdint.h>

#include "common/control.h"
#include "common/visibility.h"

enum status_style { STATUS_INLINE, STATUS_BOTTOM_ROW };

struct status {
    int on;       /* drawing at all */
    enum status_style style;
    int rows;     /* the terminal's, when the region was set (bottom-row style) */
    int drawn;    /* something is on screen */
};

/* Decides whether to draw (quiet, terminal, TERM) and prepares the
 * terminal.  style: how (see above). */
HIDDEN void status_begin(struct status *s, enum status_style style, int quiet);
/* Draws the line: elapsed ns, the counts so far, and a short note ("stopping") or NULL. */
HIDDEN void status_draw(struct status *s, uint64_t elapsed_ns, const struct control_counts *c,
                        const char *note);
/* Erases the line, so that a message can be printed; the next draw puts it back. */
HIDDEN void status_clear(struct status *s);
/* Erases the line and gives the terminal back. */
HIDDEN void status_end(struct status *s);
/* The text of the line (tests, and what status_draw shows). */
HIDDEN void status_format(char *out, size_t size, uint64_t elapsed_ns,
                          const struct control_counts *c, const char *note);

#endif
