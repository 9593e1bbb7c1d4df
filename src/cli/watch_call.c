/*
 * watch_call: a watched call's records (see watch_call.h) as a line or as
 * JSON.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/watch_call.h"


/* The next record at *p (cut at its TAB), NULL at the end. */
static char *next_record(char **p)
{
    if (!*p)
        return NULL;
    char *r = *p;
    char *tab = strchr(r, '\t');
    if (tab) {
        *tab = '\0';
        *p = tab + 1;
    } else {
        *p = NULL;
    }
    return r;
}

/* Splits a record's fields at US; returns how many (at most max). */
static int fields(char *r, char **out, int max)
{
    int n = 0;
    while (r && n < max) {
        out[n++] = r;
        char *us = strchr(r, '\x1f');
        if (!us)
            break;
        *us = '\0';
        r = us + 1;
    }
    return n;
}

int watch_call_parse(char *text, struct watch_call *c)
{
    memset(c, 0, sizeof *c);
    char *p = text;
    c->method = next_record(&p);
    if (!c->method || !c->method[0] || strchr(c->method, '\x1f'))
        return -1;
    char *r;
    while ((r = next_record(&p)) != NULL) {
        char *f[5];
        int n = fields(r, f, 5);
        if (!strcmp(f[0], "a") && (n == 4 || n == 5)) {
            if (c->nargs < WATCH_CALL_ARGS) {
                c->args[c->nargs].name = f[1];
                c->args[c->nargs].type = f[2];
                c->args[c->nargs].value = f[3];
                c->args[c->nargs].fields = n == 5 ? f[4] : NULL;
                c->nargs++;
            } else {
                c->more = 1;
            }
        } else if (!strcmp(f[0], "m") && n == 1) {
            c->more = 1;
        } else if (!strcmp(f[0], "r") && (n == 3 || n == 4)) {
            c->ret_type = f[1];
            c->ret_value = f[2];
            c->ret_fields = n == 4 ? f[3] : NULL;
        } else if (!strcmp(f[0], "t") && n == 3) {
            c->throw_type = f[1];
            c->throw_message = f[2];
        } else {
            return -1;
        }
    }
    return 0;
}

/* "{a=1, b=\"x\"}" of fields (NAME=VALUE joined by RS), "" for none;
 * returns the characters it would write (as snprintf). */
static size_t put_fields(char *out, size_t size, const char *fields)
{
    if (!fields || !fields[0])
        return 0;
    size_t o = (size_t)snprintf(out, size, "{");
    for (const char *p = fields; *p && o < size;) {
        size_t n = strcspn(p, "\x1e");
        o += (size_t)snprintf(out + o, o < size ? size - o : 0, "%s%.*s", p == fields ? "" : ", ",
                              (int)n, p);
        p += n + (p[n] == '\x1e');
    }
    if (o < size)
        o += (size_t)snprintf(out + o, size - o, "}");
    return o;
}

void watch_call_line(const struct watch_call *c, char *out, size_t size)
{
    size_t o = 0;
#define PUT(...)                                                              \
    do {                                                                      \
        if (o < size)                                                         \
            o += (size_t)snprintf(out + o, size - o, __VA_ARGS__);            \
    } while (0)
    if (!size)
        return;
    out[0] = '\0';
    PUT("%s(", c->method);
    for (uint32_t i = 0; i < c->nargs; i++) {
        PUT("%s%s=%s", i ? ", " : "", c->args[i].name, c->args[i].value);
        if (o < size)
            o += put_fields(out + o, size - o, c->args[i].fields);
    }
    if (c->more)
        PUT("%s...", c->nargs ? ", " : "");
    PUT(")");
    if (c->ret_value) {
        PUT(" = %s", c->ret_value);
        if (o < size)
            o += put_fields(out + o, size - o, c->ret_fields);
    }
    if (c->throw_type)
        PUT(" !! %s%s%s", c->throw_type, c->throw_message[0] ? ": " : "", c->throw_message);
#undef PUT
}

static void json_string(FILE *f, const char *s, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* Is text a JSON number (RFC 8259's grammar)? */
static int json_number(const char *t)
{
    const char *p = t;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (isdigit((unsigned char)*p))
        while (isdigit((unsigned char)*p))
            p++;
    else
        return 0;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return 0;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!isdigit((unsigned char)*p))
            return 0;
        while (isdigit((unsigned char)*p))
            p++;
    }
    return *p == '\0';
}

/* A shown string ("\"a\\\"b\"...(60 chars)") back to its characters,
 * JSON-escaped, with "length" when it was cut.  Returns 0, or -1 when the
 * text is not a shown string. */
static int json_shown_string(FILE *f, const char *t, const char *key, const char *length_key)
{
    if (t[0] != '"')
        return -1;
    char buf[1024];
    size_t n = 0;
    const char *p = t + 1;
    for (; *p && *p != '"' && n + 4 < sizeof buf; p++) {
        if (*p == '\\' && (p[1] == '"' || p[1] == '\\')) {
            buf[n++] = *++p;
        } else if (*p == '\\' && p[1] == 'x' && isxdigit((unsigned char)p[2]) &&
                   isxdigit((unsigned char)p[3])) {
            char hex[3] = {p[2], p[3], 0};
            buf[n++] = (char)strtol(hex, NULL, 16);
            p += 3;
        } else {
            buf[n++] = *p;
        }
    }
    if (*p != '"')
        return -1;
    p++;
    unsigned long length = 0;
    if (*p && sscanf(p, "...(%lu chars)", &length) != 1)
        return -1;
    fprintf(f, "\"%s\":", key);
    json_string(f, buf, n);
    if (length)
        fprintf(f, ",\"%s\":%lu", length_key, length);
    return 0;
}

/* "key":VALUE of a value shown as text: a number, true, false or null as
 * itself, a shown string as its characters (with "length" when cut), any
 * other as its text. */
static void json_shown(FILE *f, const char *key, const char *value, const char *length_key)
{
    if (!strcmp(value, "true") || !strcmp(value, "false") || !strcmp(value, "null") ||
        json_number(value)) {
        fprintf(f, "\"%s\":%s", key, value);
    } else if (json_shown_string(f, value, key, length_key) < 0) {
        fprintf(f, "\"%s\":", key);
        json_string(f, value, strlen(value));
    }
}

static void json_value(FILE *f, const char *type, const char *value, const char *fields)
{
    fputs("{\"type\":", f);
    json_string(f, type, strlen(type));
    fputc(',', f);
    json_shown(f, "value", value, "length");
    if (fields && fields[0]) {
        /* "fields":{"name":VALUE, ...}; a cut string's length as "name.length" */
        fputs(",\"fields\":{", f);
        char item[512];
        for (const char *p = fields; *p;) {
            size_t n = strcspn(p, "\x1e");
            snprintf(item, sizeof item, "%.*s", (int)n, p);
            char *eq = strchr(item, '=');
            if (eq) {
                *eq = '\0';
                const char *key = item;
                if (p != fields)
                    fputc(',', f);
                char length_key[sizeof item + 8];
                snprintf(length_key, sizeof length_key, "%s.length", key);
                json_shown(f, key, eq + 1, length_key);
            }
            p += n + (p[n] == '\x1e');
        }
        fputc('}', f);
    }
    fputc('}', f);
}

void watch_call_json(const struct watch_call *c, uint64_t real_ns, int tid, uint64_t duration_ns,
                     FILE *f)
{
    time_t secs = (time_t)(real_ns / 1000000000ull);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    fprintf(f, "{\"time\":\"%s.%06uZ\",\"thread\":%d,\"method\":", stamp,
            (unsigned)(real_ns / 1000 % 1000000), tid);
    json_string(f, c->method, strlen(c->method));
    fputs(",\"args\":{", f);
    for (uint32_t i = 0; i < c->nargs; i++) {
        if (i)
            fputc(',', f);
        json_string(f, c->args[i].name, strlen(c->args[i].name));
        fputc(':', f);
        json_value(f, c->args[i].type, c->args[i].value, c->args[i].fields);
    }
    fputc('}', f);
    if (c->more)
        fputs(",\"more_args\":true", f);
    if (c->ret_value) {
        fputs(",\"result\":", f);
        json_value(f, c->ret_type, c->ret_value, c->ret_fields);
    }
    fprintf(f, ",\"duration_ns\":%llu", (unsigned long long)duration_ns);
    if (c->throw_type) {
        fputs(",\"threw\":{\"type\":", f);
        json_string(f, c->throw_type, strlen(c->throw_type));
        fputc(',', f);
        if (!c->throw_message[0] || !strcmp(c->throw_message, "null") ||
            json_shown_string(f, c->throw_message, "message", "message_length") < 0)
            fputs("\"message\":null", f);
        fputc('}', f);
    }
    fputs("}\n", f);
}
