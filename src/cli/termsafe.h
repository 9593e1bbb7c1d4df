/*
 * termsafe: text from elsewhere made safe to print on a terminal.
 *
 * What corscope prints is not all its own: an agent's log lines (from any
 * process that reached the control socket), other users' command lines
 * (`corscope ps`), what a runtime says about itself.  Printed as they are,
 * their escape sequences would drive the terminal of whoever runs corscope
 * (move the cursor, rewrite what was printed, set the window title, and on
 * some terminals answer back as typed input).  Here every control
 * character (C0, DEL, and C1 as UTF-8) and every byte that is not UTF-8 is
 * shown as \xNN (\u0080 for a C1 control), and the bidirectional
 * overrides (U+202A..U+202E, U+2066..U+2069) as \uNNNN, so that what is
 * shown reads in the order it is stored.  Everything else, UTF-8 included,
 * is kept.
 */
#ifndef CORSCOPE_TERMSAFE_H
#define CORSCOPE_TERMSAFE_H

#include <stddef.h>

#include "common/visibility.h"

/* Copies `in` (NUL-terminated) into out (size bytes, NUL included), escaped;
 * never splits an escape or a character.  Returns out. */
HIDDEN char *termsafe(const char *in, char *out, size_t size);

#endif
