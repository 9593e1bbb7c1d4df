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
#include "common/watch_where.h"

#define WATCH_ARGS 6            /* parameters a probe reads (more are shown as "...") */
#define WATCH_MAX_METHODS 1000
#define WATCH_STRING_CHARS 40   /* a string's characters taken (its length always) */

/* How a value is read (set from its signature by the source). */
enum watch_read {
    WATCH_READ_NONE,    /* shown by its type's name */
    WATCH_READ_BYTES,   /* `size` bytes at the address */
    WATCH_READ_STRING,  /* a System.String reference */
    WATCH_READ_REF,     /* another reference: null, or its MethodTable (its runtime type) */
    WATCH_READ_ARRAY,   /* an array reference: null, or its length, MethodTable and first
                         * WATCH_ARRAY_BYTES of elements (primitives) */
    WATCH_READ_STRINGS, /* a string[]: its length and first WATCH_ARRAY_STRINGS strings */
    WATCH_READ_OUT,     /* an `out` argument at entry: not read (not yet set) */
    WATCH_READ_OBJECT,  /* --fields: a reference: null, or its MethodTable, the first
                         * WATCH_FIELD_BYTES of its fields and the strings its fields
                         * point to when the runtime's layout of its class is known
                         * (watch_layouts) */
    WATCH_READ_STRUCT,  /* --fields: a struct's first `size` bytes (its size from the
                         * metadata, at most WATCH_FIELD_BYTES) */
    WATCH_READ_GENERIC, /* a value of a type parameter (T): its instantiation's type
                         * handle from the RuntimeTypeHandle the method's `ldtoken T`
                         * left in a local (`handle`), then a value type's bytes, or a
                         * reference's null-ness and MethodTable, a string's text */
};

/* WATCH_READ_GENERIC's header byte 3: what the probe found. */
enum { WATCH_GENERIC_UNKNOWN, WATCH_GENERIC_VALUE, WATCH_GENERIC_REF, WATCH_GENERIC_STRING };
#define WATCH_HANDLES 2 /* type parameters a method's values are read in */

/* How the bytes of a value are shown (watch_values.c). */
enum watch_show {
    WATCH_SHOW_PLAIN,     /* by its sig kind */
    WATCH_SHOW_DECIMAL,   /* System.Decimal (16 bytes) */
    WATCH_SHOW_DATETIME,  /* System.DateTime: ticks and kind, ISO 8601 */
    WATCH_SHOW_TIMESPAN,  /* System.TimeSpan: ticks, [-][d.]hh:mm:ss[.fffffff] */
    WATCH_SHOW_GUID,      /* System.Guid */
    WATCH_SHOW_ENUM,      /* an enum of the module: names from watch_enums[enum_index] */
    WATCH_SHOW_SPAN,      /* Span<T> / ReadOnlySpan<T> / Memory-like ref struct: its length */
};

#define WATCH_ARRAY_BYTES 32    /* an array's elements copied (the first few) */
#define WATCH_FIELD_BYTES 64    /* --fields: an object's or struct's bytes copied */
#define WATCH_FIELD_STRINGS 2   /* --fields: an object's string fields taken */
#define WATCH_FIELDS_SHOWN 8    /* --fields: fields shown at most */
#define WATCH_ARRAY_SHOWN 8     /* an array's elements shown at most */
#define WATCH_ARRAY_STRINGS 3   /* a string[]'s strings taken */
#define WATCH_ELEMENT_CHARS 16  /* characters taken of each */
#define WATCH_MAX_ENUMS 64
#define WATCH_ENUM_NAMES 64

struct watch_value {
    uint8_t read;       /* enum watch_read */
    uint8_t size;       /* WATCH_READ_BYTES */
    uint8_t kind;       /* enum sig_kind, for showing (an enum: its underlying type) */
    uint8_t show;       /* enum watch_show */
    uint8_t byref;      /* ref / in / out: the address holds a pointer to the value */
    uint8_t elem_kind;  /* WATCH_READ_ARRAY: the elements' sig kind when the signature says
                         * (SIG_VOID: from the array's MethodTable, at the loop) */
    uint16_t enum_index;
    uint32_t type_token; /* WATCH_READ_STRUCT: its TypeDef in the method's module */
    uint8_t generic[2];  /* WATCH_READ_GENERIC: its type parameter (0x13 !n or 0x1e !!n, n) */
    uint8_t handle;      /* WATCH_READ_GENERIC: 1 + its handle local's index (0: none) */
    char name[32];      /* the parameter's name */
    char type[48];      /* the type's short name ("Order", "int[]") */
};

/* An enum's constants, read from the module's metadata (Field, Constant,
 * CustomAttribute [Flags]); set before a method using it is rewritten,
 * never changed after. */
struct watch_enum {
    uint8_t flags;      /* [Flags]: shown as A|B */
    uint32_t count;
    int64_t values[WATCH_ENUM_NAMES];
    char names[WATCH_ENUM_NAMES][32];
};
HIDDEN extern struct watch_enum watch_enums[WATCH_MAX_ENUMS];

/* --where bound to a method (watch_filter.c). */
enum {
    WATCH_FILTER_NONE, WATCH_FILTER_SIGNED, WATCH_FILTER_UNSIGNED, WATCH_FILTER_FLOAT,
    WATCH_FILTER_BOOL, WATCH_FILTER_STRING, WATCH_FILTER_ENUM, WATCH_FILTER_NULL,
};
#define WATCH_FILTER_RESULT 255
struct watch_filter {
    uint8_t on;
    uint8_t arg;        /* the argument's index, or WATCH_FILTER_RESULT */
    uint8_t op;         /* enum watch_where_op */
    uint8_t cls;        /* how it compares (WATCH_FILTER_*) */
    int64_t i;
    double f;
    uint32_t len;
    uint16_t text[WATCH_WHERE_TEXT];
};

struct watch_method {
    char display[160];  /* "Pricing.Quote" */
    uint32_t params;    /* declared */
    uint32_t taken;     /* read by the probe: min(params, WATCH_ARGS - has_this) */
    int has_this;       /* an instance method: `self` is read first (the probe's first
                         * address is `this`'s home; the parameters' follow) */
    struct watch_value self; /* `this`: an object by its runtime type, a struct's (a byref
                              * to it) by its type */
    struct watch_value args[WATCH_ARGS];
    struct watch_value ret; /* read SIG_VOID: none */
    struct watch_filter filter;
    uint32_t handles;   /* type parameters ldtoken'd at entry (each a RuntimeTypeHandle local
                         * whose address the probe gets: watch_enter's slots after the
                         * values', watch_exit's last argument for the result) */
    uint8_t handle_sig[WATCH_HANDLES][2]; /* each one's TypeSpec (!n or !!n) */
};

/* The table the probes read: set before the method is rewritten, never
 * changed or freed after (code rewritten may run until the process ends). */
HIDDEN extern struct watch_method watch_methods[WATCH_MAX_METHODS];

/* --fields: where the string fields of a class are, for the probe to
 * take their text (watch_runtime.c fills an entry once a class's layout
 * is known to the runtime; an entry is written once, its `mt` last). */
#define WATCH_LAYOUTS 256
struct watch_layout {
    _Atomic uint64_t mt;   /* the class (MethodTable), 0: free */
    _Atomic int claimed;
    uint8_t strings;
    uint16_t string_at[WATCH_FIELD_STRINGS]; /* from the object's start */
};
HIDDEN extern struct watch_layout watch_layouts[WATCH_LAYOUTS];
/* Probe: the layout of class mt, or NULL (no runtime call, no wait). */
HIDDEN const struct watch_layout *watch_layout_find(uint64_t mt);

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
    _Atomic uint64_t filtered;     /* calls --where left out (at entry, or at the return) */
    _Atomic uint64_t window, window_taken; /* the rate's current second */
};
HIDDEN extern struct watch_probe_state watch_probe;

enum { WATCH_ENTRY_ENTER = 1, WATCH_ENTRY_EXIT = 2, WATCH_ENTRY_THROW = 3,
       WATCH_ENTRY_DROP = 4 /* the return of a call --where left out (on its result) */ };

HIDDEN int64_t watch_enter(int32_t method, void *a0, void *a1, void *a2, void *a3, void *a4,
                           void *a5);
HIDDEN void watch_exit(int32_t method, int64_t token, void *result, void *handle);
/* The place of a RuntimeType's type handle (its m_handle field, from the
 * runtime's layout, 0: unknown: values of T are not read) and String's
 * MethodTable, learnt once (watch_runtime.c) before a method with values
 * of T is rewritten. */
HIDDEN extern _Atomic uint32_t watch_type_handle_offset;
HIDDEN extern _Atomic uint64_t watch_string_mt;
/* Learns them from CoreLib's module (its file read for the tokens).
 * Returns 0, or -1. */
HIDDEN int watch_generic_learn(ICorProfilerInfo15 *info, ModuleID corelib);
/* CoreLib's TypeDef token of System.NAME from its file, 0 when unknown. */
HIDDEN uint32_t watch_corelib_type(const char *name);
/* The module's enum TypeDef row: its index in watch_enums and its
 * underlying kind.  Returns 0, or -1. */
HIDDEN int watch_enum_index(const struct assembly *a, uint32_t row, uint16_t *index, uint8_t *kind);
/* ExceptionUnwindFunctionEnter of a watched method (the call throws out
 * of it): queues the exception's class (a ClassID, 0 when unknown). */
HIDDEN void watch_thrown(uint32_t method, uint64_t klass);
/* ExceptionThrown (the object in place, cooperative mode): keeps the
 * exception's message string (NULL: none) for this thread's next
 * watch_thrown; the entry then carries it as a string value. */
HIDDEN void watch_note_thrown(const char *message, int known);
/* Appends a string value (a System.String or NULL), at most max_chars of
 * it; returns the new word count. */
HIDDEN uint32_t watch_take_string(const char *obj, uint32_t max_chars, uint64_t read, uint64_t *w,
                                  uint32_t n);

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
    uint8_t bytes[WATCH_FIELD_BYTES]; /* BYTES (at most 16), an array's first elements, an
                                       * object's or a struct's first bytes */
    uint8_t layout_known; /* OBJECT: the probe knew its string fields (the strings follow) */
    uint32_t nbytes;           /* ARRAY: element bytes taken */
    uint64_t mt;               /* REF, ARRAY: the object's MethodTable (its ClassID) */
    uint32_t strings;          /* STRINGS: how many taken */
    uint32_t string_len[WATCH_ARRAY_STRINGS];
    uint32_t string_chars[WATCH_ARRAY_STRINGS];
    uint16_t string_text[WATCH_ARRAY_STRINGS][WATCH_ELEMENT_CHARS];
    /* set by the loop from mt (the runtime's names), "" when unknown */
    char runtime_type[96];
    /* GENERIC, set by the loop from the type handle: the value as one of
     * the instantiation's type (read, bytes, mt, text moved to match) */
    uint8_t generic_kind;      /* WATCH_GENERIC_* the probe found */
    uint64_t handle;           /* the instantiation's type handle */
    uint8_t has_plan;
    struct watch_value plan;
    uint8_t runtime_elem;      /* ARRAY: the elements' sig kind from the runtime (SIG_VOID: not
                                * a primitive) */
};
HIDDEN int watch_decode_value(const uint64_t *payload, uint32_t words, uint32_t *pos,
                              struct watch_decoded *out);
/* A decoded value as text ("4", "\"sku-1\"", "null", "int[3] {1, 2, 3}", "9.00",
 * "2024-02-29T13:45:00.0000000Z", "Color.Red|Blue"). */
HIDDEN void watch_format_value(const struct watch_value *v, const struct watch_decoded *d,
                               char *out, size_t size);
/* The type a value is said to have: its runtime type when the probe saw
 * one (an object, an array of T), else the declared one. */
HIDDEN const char *watch_type_shown(const struct watch_value *v, const struct watch_decoded *d);
/* A decoded string value as text ("null", "\"abc\"...(60 chars)"). */
HIDDEN void watch_format_string(const struct watch_decoded *d, char *out, size_t size);
/* watch_values.c: the parts of showing values that are pure (unit tested). */
HIDDEN void watch_format_datetime(uint64_t data, char *out, size_t size);
HIDDEN void watch_format_timespan(int64_t ticks, char *out, size_t size);
HIDDEN void watch_format_guid(const uint8_t b[16], char *out, size_t size);
HIDDEN void watch_format_enum(const struct watch_enum *e, const char *type, int64_t value,
                              char *out, size_t size);
/* Fills v's reading plan (read, size, show, byref, elem_kind, enum) for a
 * parameter's or return type from the assembly's metadata; `out`: an
 * [Out] byref parameter without [In] (not read at entry). */
HIDDEN void watch_plan_value(const struct assembly *a, const struct sig_type *t, int out,
                             struct watch_value *v);
/* --fields: turns a plan's references into OBJECT and its structs whose
 * size the metadata gives (fields of fixed size only, sequential) into
 * STRUCT. */
HIDDEN void watch_plan_fields(const struct assembly *a, const struct sig_type *t,
                              struct watch_value *v);
/* The type of Field row `row` of a's (its FieldSig).  Returns 0, or -1. */
HIDDEN int watch_field_type(const struct assembly *a, uint32_t row, struct sig_type *t);
/* A type's short name for showing ("Order", "int[]", "ref int", "T"). */
HIDDEN void watch_type_text(const struct assembly *a, const struct sig_type *t, char *out,
                            size_t size);
/* Fills v for `this` of a method of TypeDef row `type`: a reference, or
 * for a value type a byref to it; named "this", typed by the type's short
 * name. */
HIDDEN void watch_plan_this(const struct assembly *a, uint32_t type, int fields,
                            struct watch_value *v);
/* A module's file was seen: its folder is where the assemblies its types
 * name are looked for (enums of other assemblies). */
HIDDEN void watch_values_module_dir(const char *path);
/* The C# keyword of a primitive sig kind ("int"), NULL when none. */
HIDDEN const char *watch_keyword(uint8_t kind);

/* System's value types a probe copies and the loop shows by value (their
 * name in the namespace System, bytes, WATCH_SHOW_*); ends with a NULL
 * name.  watch_values.c plans them from a signature, watch_runtime.c from
 * a generic argument's runtime type. */
struct watch_fixed_type {
    const char *name;
    uint8_t size, show;
};
HIDDEN extern const struct watch_fixed_type watch_fixed_types[];

/* watch_filter.c: binds --where to method m (which argument, the literal
 * in its kind).  Returns 0, or -1 with why (names the method and its
 * arguments). */
HIDDEN int watch_filter_bind(const struct watch_where_expr *e, struct watch_method *m, char *why,
                             size_t why_size);
/* Probe: does the value at addr (an argument's home, or the result's)
 * pass the filter? */
HIDDEN int watch_filter_keeps(const struct watch_filter *f, const struct watch_value *v,
                              const void *addr);

/* watch_runtime.c.  Loop: fills d's runtime_type / runtime_elem from
 * its MethodTable (names from the runtime, cached). */
HIDDEN void watch_resolve(ICorProfilerInfo15 *info, struct watch_decoded *d);
/* The module's assembly as watch read it from its file, NULL when it has
 * not (watch.c). */
HIDDEN const struct assembly *watch_assembly_of(ModuleID module);
/* --fields, loop: an OBJECT or STRUCT value's fields as "name=value"
 * items joined by RS (0x1e) into out ("" when none known); module: the
 * watched method's (a struct's type token is of it). */
HIDDEN void watch_format_fields(ICorProfilerInfo15 *info, const struct watch_value *v,
                                const struct watch_decoded *d, ModuleID module, char *out,
                                size_t size);
/* --fields, at rewrite time: learns the string fields of TypeDef `type`
 * of module (a class the runtime has loaded, not generic) for the probe,
 * so that its first call shows them. */
HIDDEN void watch_layout_learn(ICorProfilerInfo15 *info, ModuleID module, mdTypeDef type);
/* A runtime type name shortened: namespaces dropped, generic arguments
 * in <> ("Dictionary<String, Int32>"). */
HIDDEN void watch_short_type(const char *full, char *out, size_t size);
/* ExceptionThrown: notes the exception's message for this thread's next
 * watch_thrown (the field's offset found once, from the class layout). */
HIDDEN void watch_throw_seen(ICorProfilerInfo15 *info, ObjectID object, ClassID klass);

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
                                 int fields, char *why, size_t why_size);
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
