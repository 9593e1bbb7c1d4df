/*
 * sig: method and local signatures (ECMA-335 II.23.2) read for live probes
 * (`corscope watch`): what each argument and the return value is, so that
 * a probe knows how many bytes to copy from an argument's home and how to
 * show them, and the raw bytes of a type, so that a local of the return
 * type can be appended to a method's local signature.  Pure functions on
 * untrusted bytes: every read is bounded, a malformed blob is refused.
 */
#ifndef CORSCOPE_SIG_H
#define CORSCOPE_SIG_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"

/* What a value is, as far as showing it goes. */
enum sig_kind {
    SIG_VOID, SIG_BOOL, SIG_CHAR, SIG_I1, SIG_U1, SIG_I2, SIG_U2, SIG_I4, SIG_U4, SIG_I8, SIG_U8,
    SIG_R4, SIG_R8, SIG_I, SIG_U, SIG_STRING,
    SIG_OBJECT,    /* a reference: class, object, array, generic class instance */
    SIG_VALUETYPE, /* a struct (the caller may recognise System.Decimal and others by token) */
    SIG_BYREF,     /* ref / in / out */
    SIG_POINTER,   /* unmanaged pointer or function pointer */
    SIG_GENERIC,   /* a type parameter (!0, !!0): its instantiation is not known here */
    SIG_OTHER,     /* TypedReference and the like: never read */
};

struct sig_type {
    uint8_t kind;         /* enum sig_kind */
    uint8_t array;        /* SIG_OBJECT: an array (SZARRAY or ARRAY) */
    uint32_t token;       /* SIG_OBJECT / SIG_VALUETYPE: TypeDef/TypeRef/TypeSpec token of the
                           * class (a generic instance: its generic type), 0 when none */
    const uint8_t *bytes; /* the type's bytes in the blob, custom modifiers included */
    uint32_t len;
};

#define SIG_MAX_PARAMS 64

struct sig_method {
    int has_this;
    int vararg;
    uint32_t generic_count;  /* generic method: its type parameters */
    uint32_t param_count;    /* as declared (params[] holds the first SIG_MAX_PARAMS) */
    struct sig_type ret;
    struct sig_type params[SIG_MAX_PARAMS];
};

/* Parses a MethodDefSig.  Returns 0, or -1 when malformed. */
HIDDEN int sig_method(const uint8_t *blob, size_t len, struct sig_method *out);

/* Reads one type at *p (advanced past it) below end.  Returns 0 or -1. */
HIDDEN int sig_type(const uint8_t **p, const uint8_t *end, struct sig_type *out);

/* A LocalVarSig (blob NULL or len 0: none) with types appended: writes the
 * new blob into out (at most out_size bytes) and its length to *out_len.
 * Returns the index of the first appended local, or -1 when the old blob
 * is malformed or the new one does not fit. */
HIDDEN long sig_locals_append(const uint8_t *blob, size_t len, const struct sig_type *add,
                              uint32_t add_count, uint8_t *out, size_t out_size, size_t *out_len);

/* Writes n as a compressed unsigned integer (II.23.2); returns its size
 * (1, 2 or 4), or 0 when n > 0x1fffffff. */
HIDDEN size_t sig_compress(uint32_t n, uint8_t out[4]);

#endif
