/*
 * watch_runtime: what showing a watched call asks of the runtime, never
 * of the program's code: the runtime type of a reference the probe saw
 * (its MethodTable, which CoreCLR's ClassID is), and the message of an
 * exception thrown out of a watched method (System.Exception._message,
 * at the offset the runtime's class layout gives, read in place in the
 * ExceptionThrown callback).
 */
#include <stdio.h>
#include <string.h>

#include "agent/log.h"
#include "agent/names.h"
#include "agent/sources/watch.h"

#define TYPE_CACHE 64

/* Loop only: MethodTable -> short name and element kind. */
static struct {
    uint64_t mt;
    uint8_t elem;
    char name[96];
} cache[TYPE_CACHE];

/* "System.Collections.Generic.Dictionary`2[System.String,System.Int32]"
 * -> "Dictionary<String, Int32>"; "System.Int32[]" -> "Int32[]". */
void watch_short_type(const char *full, char *out, size_t size)
{
    size_t o = 0, token = 0;
    int depth = 0;
    if (!size)
        return;
    for (const char *c = full; *c && o + 3 < size; c++) {
        if (*c == '.') {
            o = token; /* a namespace or enclosing part: dropped */
        } else if (*c == '`') {
            while (c[1] >= '0' && c[1] <= '9')
                c++;
            if (c[1] == '[' && c[2] != ']') {
                c++;
                out[o++] = '<';
                depth++;
                token = o;
            }
        } else if (*c == ']' && depth > 0 && (c == full || c[-1] != '[')) {
            out[o++] = '>';
            depth--;
            token = o;
        } else if (*c == ',' && depth > 0) {
            out[o++] = ',';
            out[o++] = ' ';
            token = o;
        } else {
            out[o++] = *c;
            if (*c == '[' || *c == '+')
                token = o;
        }
    }
    out[o] = '\0';
}

static uint8_t sig_kind_of(CorElementType t)
{
    switch (t) {
    case ELEMENT_TYPE_BOOLEAN: return SIG_BOOL;
    case ELEMENT_TYPE_CHAR: return SIG_CHAR;
    case ELEMENT_TYPE_I1: return SIG_I1;
    case ELEMENT_TYPE_U1: return SIG_U1;
    case ELEMENT_TYPE_I2: return SIG_I2;
    case ELEMENT_TYPE_U2: return SIG_U2;
    case ELEMENT_TYPE_I4: return SIG_I4;
    case ELEMENT_TYPE_U4: return SIG_U4;
    case ELEMENT_TYPE_I8: return SIG_I8;
    case ELEMENT_TYPE_U8: return SIG_U8;
    case ELEMENT_TYPE_R4: return SIG_R4;
    case ELEMENT_TYPE_R8: return SIG_R8;
    case ELEMENT_TYPE_I: return SIG_I;
    case ELEMENT_TYPE_U: return SIG_U;
    default: return SIG_VOID;
    }
}

void watch_resolve(ICorProfilerInfo15 *info, struct watch_decoded *d)
{
    if (!d->mt || (d->read != WATCH_READ_REF && d->read != WATCH_READ_ARRAY))
        return;
    uint32_t slot = (uint32_t)((d->mt >> 3) % TYPE_CACHE);
    if (cache[slot].mt != d->mt) {
        char full[256];
        cache[slot].mt = 0;
        cache[slot].elem = SIG_VOID;
        if (names_describe_class(info, (ClassID)d->mt, full, sizeof full) < 0)
            return;
        /* a compiler-made type (an async method's state machine box, a
         * closure): its declared type says more */
        if (strstr(full, "+<") || full[0] == '<')
            full[0] = '\0';
        watch_short_type(full, cache[slot].name, sizeof cache[slot].name);
        CorElementType elem = ELEMENT_TYPE_END;
        ClassID elem_class = 0;
        ULONG rank = 0;
        if (info->lpVtbl->IsArrayClass(info, (ClassID)d->mt, &elem, &elem_class, &rank) == S_OK &&
            rank == 1)
            cache[slot].elem = sig_kind_of(elem);
        cache[slot].mt = d->mt;
    }
    snprintf(d->runtime_type, sizeof d->runtime_type, "%s", cache[slot].name);
    d->runtime_elem = cache[slot].elem;
}

/* System.Exception._message's offset from the object's start: 0 unknown
 * yet, -1 not found. */
static _Atomic int32_t message_offset;

static int32_t find_message_offset(ICorProfilerInfo15 *info, ClassID klass)
{
    for (int depth = 0; klass && depth < 32; depth++) {
        ModuleID module = 0;
        mdTypeDef token = 0;
        ClassID parent = 0;
        ULONG32 nargs = 0;
        char name[128];
        if (info->lpVtbl->GetClassIDInfo2(info, klass, &module, &token, &parent, 0, &nargs,
                                          NULL) < 0)
            break;
        if (names_describe_class(info, klass, name, sizeof name) == 0 &&
            !strcmp(name, "System.Exception")) {
            static const char *const wanted[1] = {"_message"};
            int32_t offset = -1;
            if (names_field_offsets(info, klass, module, wanted, &offset, 1) == 1 && offset > 0)
                return offset;
            break;
        }
        klass = parent;
    }
    log_warn("watch: System.Exception._message was not found: throws are shown by type only");
    return -1;
}

void watch_throw_seen(ICorProfilerInfo15 *info, ObjectID object, ClassID klass)
{
    int32_t offset = atomic_load_explicit(&message_offset, memory_order_acquire);
    if (!offset && klass) {
        offset = find_message_offset(info, klass);
        atomic_store_explicit(&message_offset, offset, memory_order_release);
    }
    if (offset <= 0 || !object) {
        watch_note_thrown(NULL, 0);
        return;
    }
    /* in the callback the object is in place and does not move */
    const char *message;
    memcpy(&message, (const char *)object + offset, sizeof message);
    watch_note_thrown(message, 1);
}
