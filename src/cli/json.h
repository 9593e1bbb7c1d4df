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

#endif
