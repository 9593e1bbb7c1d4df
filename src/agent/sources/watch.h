/*
 * watch (live probes, `corscope watch`): what the probes (watch_probe.c,
 * the code the rewritten methods call) and the source (watch.c: finds the
 * methods, rewrites them, turns what the probes took into lines for
 * corscope) share.
 *
 * A watched method is rewritten (agent/il) to call, through `calli` of a
 * constant native address (no metadata but two StandAloneSigs), at entry
 *     int64 watch_enter(int32 method, void *arg0 .. void *arg5)
 * with the address of each of its first WATCH_ARGS parameters (ldarga),
 * the returned token kept in a new local, and before each `ret`
 *     void watch_exit(int32 method, int64 token, void *result)
 * with the address of the return value (kept in another new local).  The
 * probes read the values in place -- primitives, a string's length and
 * first characters, a reference's null-ness, an array's length, a
 * decimal's bits -- and queue them (evq.h) for the loop, which pairs each
 * exit with its entry by thread and token.  No managed code runs.
 */
#ifndef CORSCOPE_WATCH_H
#define CORSCOPE_WATCH_H

#include <stdatomic.h>
#include <stdint.h>

#include "agent/il/il.h"
#include "clr/clr_interfaces.h"
#include "common/pdb/assembly.h"
#include "common/pdb/sig.h"
#include "common/visibility.h"

#define WATCH_ARGS 6            /* parameters a probe reads (more are shown as "...") */
#define WATCH_MAX_METHODS 1000
#define WATCH_STRING_CHARS 40   /* a string's characters taken (its length always) */

/* How a value is read (set from its signature by the source). */
enum watch_read {
    WATCH_READ_NONE,    /* shown by its type's name */
    WATCH_READ_BYTES,   /* `size` bytes at the address */
    WATCH_READ_STRING,  /* a System.String reference */
    WATCH_READ_REF,     /* another reference: null or not */
    WATCH_READ_ARRAY,   /* an array reference: null or its length */
};

struct watch_value {
    uint8_t read;       /* enum watch_read */
    uint8_t size;       /* WATCH_READ_BYTES */
    uint8_t kind;       /* enum sig_kind, for showing */
    uint8_t decimal;    /* a System.Decimal (16 bytes) */
    char name[32];      /* the parameter's name */
    char type[48];      /* the type's short name ("Order", "int[]") */
};

struct watch_method {
    char display[160];  /* "Pricing.Quote" */
    uint32_t params;    /* declared */
    uint32_t taken;     /* read by the probe: min(params, WATCH_ARGS) */
    int has_this;
    struct watch_value args[WATCH_ARGS];
    struct watch_value ret; /* read SIG_VOID: none */
};

/* The table the probes read: set before the method is rewritten, never
 * changed or freed after (code rewritten may run until the process ends). */
HIDDEN extern struct watch_method watch_methods[WATCH_MAX_METHODS];

/* The probes' state. */
struct watch_probe_state {
    _Atomic int active;            /* 0: the probes return at once */
    _Atomic int inflight;          /* probes running now (stop waits for 0) */
    uint32_t source;               /* the source's index (evq tag) */
    uint64_t count_limit;          /* entries taken at most (0: none) */
    uint32_t rate;                 /* entries taken a second at most */
    uint32_t stack_depth;          /* --stack: frames an entry takes (0 none) */
    _Atomic uint64_t taken;        /* entries queued */
    _Atomic uint64_t over_count, over_rate, queue_full;
    _Atomic uint64_t window, window_taken; /* the rate's current second */
};
HIDDEN extern struct watch_probe_state watch_probe;

enum { WATCH_ENTRY_ENTER = 1, WATCH_ENTRY_EXIT = 2, WATCH_ENTRY_THROW = 3 };

HIDDEN int64_t watch_enter(int32_t method, void *a0, void *a1, void *a2, void *a3, void *a4,
                           void *a5);
HIDDEN void watch_exit(int32_t method, int64_t token, void *result);
/* ExceptionUnwindFunctionEnter of a watched method (the call throws out
 * of it): queues the exception's class (a ClassID, 0 when unknown). */
HIDDEN void watch_thrown(uint32_t method, uint64_t klass);

/* Loop: waits (briefly, bounded) until no probe is running, after
 * active was cleared. */
HIDDEN void watch_probe_quiesce(void);

/* The payload of an entry: word 0 method | count << 32, word 1 token,
 * then per value a header word (read, size/length, chars taken) and its
 * data words.  watch_decode_value reads one at *pos (advanced).
 * Returns 0, or -1 when the payload is short. */
struct watch_decoded {
    uint8_t read, is_null;
    uint32_t length;           /* string or array length */
    uint32_t chars;            /* string characters taken */
    uint16_t text[WATCH_STRING_CHARS];
    uint8_t bytes[16];
};
HIDDEN int watch_decode_value(const uint64_t *payload, uint32_t words, uint32_t *pos,
                              struct watch_decoded *out);
/* A decoded value as text ("4", "\"sku-1\"", "null", "int[3]", "9.00"). */
HIDDEN void watch_format_value(const struct watch_value *v, const struct watch_decoded *d,
                               char *out, size_t size);

/* watch_names.c: names and reading plans from the assembly's file. */
HIDDEN void watch_copy(char *out, size_t size, const char *in);
HIDDEN const char *watch_last_dot(const char *s);
HIDDEN void watch_full_name(const struct assembly *a, uint32_t row, char *out, size_t size);
/* Does "Namespace.Type.Method" match the pattern (fnmatch; or with
 * leading namespaces left out)? */
HIDDEN int watch_pattern_matches(const char *pattern, const char *name);
HIDDEN int watch_has_body(const struct assembly *a, uint32_t row);
/* Does the method's parameter list match params, the written types
 * comma-separated without spaces ("string,int"; "" none): C# keywords or
 * System names (int, System.Int32), other types by their name or full
 * name, T[] and ref T? */
HIDDEN int watch_signature_matches(const struct assembly *a, uint32_t row, const char *params);
/* "Quote(string,int)": the method's name and its parameters' types. */
HIDDEN void watch_signature_text(const struct assembly *a, uint32_t row, char *out, size_t size);
/* Fills m for a MethodDef row.  Returns 0, or -1 with why. */
HIDDEN int watch_describe_method(const struct assembly *a, uint32_t row, struct watch_method *m,
                                 char *why, size_t why_size);
HIDDEN void watch_near_names(const char *pattern, const struct assembly *const *assemblies,
                             uint32_t count, char *out, size_t size);

/* watch_il.c: the rewritten body of watched method `index` (token of
 * module, read from the file asm_), into out (free with
 * il_rewritten_free); sigs caches the module's probe signatures.
 * Returns 0, or -1 with why. */
HIDDEN int watch_rewrite(ICorProfilerInfo15 *info, ModuleID module, const struct assembly *asm_,
                         uint32_t sigs[2], mdMethodDef token, uint32_t index, int attached,
                         struct il_rewritten *out, char *why, size_t why_size);

#endif
