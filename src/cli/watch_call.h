/*
 * watch_call: the content of a `call` control message from the agent's
 * watch source (common/control.h), read into its parts, and written as the
 * line people read or as one JSON object (`watch -o calls.jsonl`).
 *
 * After "call TID START DUR " the text is records separated by TAB, their
 * fields by US (0x1f); neither appears in a value (the agent escapes
 * control characters in strings):
 *
 *     METHOD                            "Pricing.Quote" (the first record)
 *     a US NAME US TYPE US VALUE [US FIELDS]
 *                                       an argument, in order (`this` first
 *                                       for an instance method)
 *     m                                 more arguments than the probe reads
 *     r US TYPE US VALUE [US FIELDS]    the return value (not for void)
 *     t US TYPE US MESSAGE              the call threw (MESSAGE: a string
 *                                       value as shown, "" when unknown)
 *
 * VALUE is the text shown ("4", "\"sku-1\"...(60 chars)", "int[3] {1, 2,
 * 3}", "Blue", "null").  FIELDS (--fields) are an object's or a struct's
 * fields, NAME=VALUE items joined by RS (0x1e), VALUE shown as above.
 */
#ifndef CORSCOPE_WATCH_CALL_H
#define CORSCOPE_WATCH_CALL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/visibility.h"

#define WATCH_CALL_ARGS 16

struct watch_call {
    const char *method;
    uint32_t nargs;
    int more;
    struct {
        const char *name, *type, *value;
        const char *fields; /* NULL: none (NAME=VALUE items joined by RS) */
    } args[WATCH_CALL_ARGS];
    const char *ret_type, *ret_value;       /* NULL: none */
    const char *ret_fields;                 /* NULL: none */
    const char *throw_type, *throw_message; /* NULL: did not throw */
};

/* Splits text (changed in place) into c.  Returns 0, or -1 when it is not
 * a call's records. */
HIDDEN int watch_call_parse(char *text, struct watch_call *c);
/* "Pricing.Quote(sku=\"a\", qty=4) = 9.00", "... !! Type: \"message\"",
 * "Cart.Add(this=Cart{items=2, owner=\"ann\"}, n=2)". */
HIDDEN void watch_call_line(const struct watch_call *c, char *out, size_t size);
/* One JSON object and a newline: time (ISO 8601 UTC from real_ns),
 * thread, method, args {name: {type, value[, fields {name: value}]}},
 * result {type, value[, fields]},
 * duration_ns, threw {type, message}.  A value shown as a number, true,
 * false or null is that JSON value; a string value is its text (with
 * "length" when it was cut); any other, the text shown. */
HIDDEN void watch_call_json(const struct watch_call *c, uint64_t real_ns, int tid,
                            uint64_t duration_ns, FILE *f);

#endif
