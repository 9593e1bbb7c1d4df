/*
 * json: the one piece of JSON writing the JSON formats (speedscope, chrome,
 * the flame graph's embedded data) share: a string literal, escaped as
 * RFC 8259 requires, invalid UTF-8 replaced so that every consumer parses
 * it, and '<' written as \u003c so the text is safe inside an HTML
 * <script> element.
 */
#ifndef CORSCOPE_JSON_H
#define CORSCOPE_JSON_H

#include <stdint.h>
#include <stdio.h>

#include "common/visibility.h"

/* Writes s as a JSON string literal, quotes included. */
HIDDEN void json_string(FILE *out, const char *s);
/* Writes v in decimal, preceded by a comma unless `first`: the arrays of
 * millions of numbers the flame graph carries, faster than fprintf. */
HIDDEN void json_uint(FILE *out, uint64_t v, int first);
/* Writes v as one number of a packed array: a JSON string of base-32
 * digits, most significant first, each a character of
 * "0-9A-Za-z-_" (digit d is the character d when it ends the number, the
 * character 32 + d when more digits follow).  No separators and no
 * escapes: a million numbers below 32768 take 3 MB or less, against 6-7 MB as
 * a JSON array, and the flame graph page decodes them in one loop over
 * the string.  The page's packed arrays begin with their length. */
HIDDEN void json_pack(FILE *out, uint64_t v);

#endif
