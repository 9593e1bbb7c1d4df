/*
 * schema: see schema.h.  The tables here are made from its lists, one
 * array of values and one of fields per event (each ends in an empty
 * entry, so an event without fields still has an array).
 */
#include "format/schema.h"

#include <string.h>

#include "format/writer.h"

#define VALUE_ROW(ID, name, unit, doc) {name, unit, 0, doc},
#define FIELD_ROW(ID, name, type, doc) {name, NULL, FMT_FIELD_##type, doc},
#define MEMBER_ARRAYS(NAME, name, doc)                                                         \
    static const struct schema_member NAME##_values[] = {FMT_##NAME##_VALUES(VALUE_ROW){0}};   \
    static const struct schema_member NAME##_fields[] = {FMT_##NAME##_FIELDS(FIELD_ROW){0}};
FMT_EVENTS(MEMBER_ARRAYS)
#undef MEMBER_ARRAYS
#undef FIELD_ROW
#undef VALUE_ROW

const struct schema_event schema_events[FMT_EV_COUNT] = {
#define EVENT_ROW(NAME, name, doc)                                                             \
    [FMT_EV_##NAME] = {name, doc, FMT_##NAME##_VALUE_COUNT, FMT_##NAME##_FIELD_COUNT,          \
                       NAME##_values, NAME##_fields},
    FMT_EVENTS(EVENT_ROW)
#undef EVENT_ROW
};

const char *schema_event_name(enum fmt_ev ev)
{
    return schema_events[ev].name;
}

const char *schema_type_name(uint8_t type)
{
    static const char *const names[FMT_FIELD_TYPE_MAX + 1] = {
        [FMT_FIELD_UINT] = "uint",   [FMT_FIELD_STRING] = "string",
        [FMT_FIELD_FRAME] = "frame", [FMT_FIELD_THREAD] = "thread",
        [FMT_FIELD_STACK] = "stack", [FMT_FIELD_TIME] = "time",
        [FMT_FIELD_DURATION] = "duration", [FMT_FIELD_INT] = "int",
    };
    return type <= FMT_FIELD_TYPE_MAX && names[type] ? names[type] : "?";
}

static const char *const counter_keys[FMT_COUNTER_COUNT] = {
#define KEY(name, key, words) key,
    FMT_COUNTERS(KEY)
#undef KEY
};

static const char *const counter_words[FMT_COUNTER_COUNT] = {
#define WORDS(name, key, words) words,
    FMT_COUNTERS(WORDS)
#undef WORDS
};

const char *schema_counter_key(enum fmt_counter c)
{
    return counter_keys[c];
}

const char *schema_counter_words(enum fmt_counter c)
{
    return counter_words[c];
}

void schema_event_def_part(struct writer_event_def *d, enum fmt_ev ev, uint32_t values,
                           uint32_t fields)
{
    const struct schema_event *e = &schema_events[ev];
    memset(d, 0, sizeof *d);
    d->name = e->name;
    for (uint32_t i = 0; i < e->value_count; i++) {
        if (!(values >> i & 1))
            continue;
        d->value_names[d->value_count] = e->values[i].name;
        d->value_units[d->value_count++] = e->values[i].unit;
    }
    for (uint32_t i = 0; i < e->field_count; i++) {
        if (!(fields >> i & 1))
            continue;
        d->field_names[d->field_count] = e->fields[i].name;
        d->field_types[d->field_count++] = e->fields[i].type;
    }
}

void schema_event_def(struct writer_event_def *d, enum fmt_ev ev)
{
    schema_event_def_part(d, ev, UINT32_MAX, UINT32_MAX);
}
