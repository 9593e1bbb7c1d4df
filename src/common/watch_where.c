/*
 * watch_where: parsing `--where 'NAME OP LITERAL'` (see watch_where.h).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/watch_where.h"

static const char *const op_texts[] = {
    [WHERE_EQ] = "==", [WHERE_NE] = "!=", [WHERE_LT] = "<",  [WHERE_LE] = "<=",
    [WHERE_GT] = ">",  [WHERE_GE] = ">=", [WHERE_CONTAINS] = "contains",
};

const char *watch_where_op_text(uint8_t op)
{
    return op <= WHERE_CONTAINS ? op_texts[op] : "?";
}

static const char *skip_space(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

static int is_name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

int watch_where_parse(const char *expr, struct watch_where_expr *out, char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    const char *p = skip_space(expr);
    size_t n = 0;
    if (!isalpha((unsigned char)*p) && *p != '_' && *p != '@')
        return snprintf(why, why_size, "it must start with an argument's name or 'result' "
                        "(e.g. 'qty > 10')"), -1;
    if (*p == '@')
        p++; /* C#'s @name */
    while (is_name_char(*p)) {
        if (n + 1 >= sizeof out->name)
            return snprintf(why, why_size, "the argument's name is too long"), -1;
        out->name[n++] = *p++;
    }
    p = skip_space(p);
    static const struct {
        const char *text;
        uint8_t op;
    } ops[] = {
        {"==", WHERE_EQ}, {"!=", WHERE_NE}, {"<=", WHERE_LE}, {">=", WHERE_GE},
        {"<", WHERE_LT},  {">", WHERE_GT},  {"=", WHERE_EQ},  {"contains", WHERE_CONTAINS},
    };
    size_t k;
    for (k = 0; k < sizeof ops / sizeof ops[0]; k++)
        if (!strncmp(p, ops[k].text, strlen(ops[k].text)))
            break;
    if (k == sizeof ops / sizeof ops[0])
        return snprintf(why, why_size, "no operator after '%s' (one of == != < <= > >= "
                        "contains)", out->name), -1;
    out->op = ops[k].op;
    p = skip_space(p + strlen(ops[k].text));
    if (!*p)
        return snprintf(why, why_size, "no value after '%s'", op_texts[out->op]), -1;
    if (*p == '"') {
        out->literal = WHERE_STRING;
        for (p++; *p && *p != '"'; p++) {
            if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
                p++;
            if (out->len >= WATCH_WHERE_TEXT)
                return snprintf(why, why_size, "a string of more than %d characters",
                                WATCH_WHERE_TEXT), -1;
            out->text[out->len++] = *p;
        }
        if (*p != '"')
            return snprintf(why, why_size, "a string without its closing quote"), -1;
        p++;
    } else if (isdigit((unsigned char)*p) || *p == '-' || *p == '+' || *p == '.') {
        char *end;
        errno = 0;
        long long i = strtoll(p, &end, 0);
        if (end != p && !errno && (!*end || !strchr(".eE", *end))) {
            out->literal = WHERE_INT;
            out->i = i;
            out->f = (double)i;
        } else {
            errno = 0;
            double f = strtod(p, &end);
            if (end == p || errno || !isfinite(f))
                return snprintf(why, why_size, "'%s' is not a number", p), -1;
            out->literal = WHERE_FLOAT;
            out->f = f;
        }
        p = end;
        if (*p == 'm' || *p == 'M' || *p == 'L' || *p == 'l' || *p == 'd' || *p == 'f')
            p++; /* C# suffixes */
    } else if (isalpha((unsigned char)*p) || *p == '_') {
        while (is_name_char(*p) || *p == '.') {
            if (out->len >= WATCH_WHERE_TEXT)
                return snprintf(why, why_size, "a name of more than %d characters",
                                WATCH_WHERE_TEXT), -1;
            out->text[out->len++] = *p++;
        }
        if (!strcmp(out->text, "true") || !strcmp(out->text, "false")) {
            out->literal = WHERE_BOOL;
            out->i = out->text[0] == 't';
        } else if (!strcmp(out->text, "null")) {
            out->literal = WHERE_NULL;
        } else {
            /* Color.Blue: the constant's name */
            const char *dot = strrchr(out->text, '.');
            if (dot)
                memmove(out->text, dot + 1, strlen(dot));
            out->len = (uint32_t)strlen(out->text);
            out->literal = WHERE_NAME;
        }
    } else {
        return snprintf(why, why_size, "'%s' is not a value (a number, \"a string\", true, "
                        "false, null or an enum constant)", p), -1;
    }
    p = skip_space(p);
    if (*p)
        return snprintf(why, why_size, "'%s' after the comparison (one comparison only)", p), -1;
    if (out->op == WHERE_CONTAINS && out->literal != WHERE_STRING)
        return snprintf(why, why_size, "'contains' takes a \"string\""), -1;
    if ((out->literal == WHERE_NULL || out->literal == WHERE_BOOL || out->literal == WHERE_NAME) &&
        out->op != WHERE_EQ && out->op != WHERE_NE)
        return snprintf(why, why_size, "only == and != compare with %s", out->text), -1;
    return 0;
}
