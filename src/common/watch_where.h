/*
 * watch_where: `corscope watch --where 'EXPR'`, the filter on a watched
 * call's values: one comparison of an argument (by its name) or `result`
 * with a literal:
 *
 *     qty > 10        sku == "sku-1"      sku contains "ku"    note != null
 *     rush == true    weight <= 2.5       c == Blue (an enum's constant)
 *
 * Operators ==, !=, <, <=, >, >=, and `contains` (strings).  Literals:
 * integers, decimals (1.5, -3e2), "strings" (\" and \\ escaped), true,
 * false, null, and a name (an enum constant, resolved against the
 * argument's type when the method is taken).  Parsed here (pure, used by
 * the CLI to refuse a bad expression early and by the agent, which binds
 * the name to each watched method's argument and evaluates it in the
 * probe, before the call is taken).
 */
#ifndef CORSCOPE_WATCH_WHERE_H
#define CORSCOPE_WATCH_WHERE_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"

#define WATCH_WHERE_TEXT 64 /* a string literal's characters at most */

enum watch_where_op {
    WHERE_EQ, WHERE_NE, WHERE_LT, WHERE_LE, WHERE_GT, WHERE_GE, WHERE_CONTAINS,
};

enum watch_where_literal {
    WHERE_INT,      /* i (and f) */
    WHERE_FLOAT,    /* f */
    WHERE_STRING,   /* text, len */
    WHERE_BOOL,     /* i: 0 or 1 */
    WHERE_NULL,
    WHERE_NAME,     /* text: an enum constant's name */
};

struct watch_where_expr {
    char name[64];          /* the argument's name, or "result" */
    uint8_t op;             /* enum watch_where_op */
    uint8_t literal;        /* enum watch_where_literal */
    int64_t i;
    double f;
    uint32_t len;
    char text[WATCH_WHERE_TEXT + 1];
};

/* Parses expr.  Returns 0, or -1 with why (a sentence without the
 * expression). */
HIDDEN int watch_where_parse(const char *expr, struct watch_where_expr *out, char *why,
                             size_t why_size);

/* The operator's spelling ("<=", "contains"). */
HIDDEN const char *watch_where_op_text(uint8_t op);

#endif
