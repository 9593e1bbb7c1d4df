/*
 * fuzz_config: the settings parser (common/config.c, common/units.c) over
 * arbitrary text.
 *
 * The agent reads its settings from the environment of the program it is
 * loaded into, where anything can be set.  The input is lines of
 * `key=value` (the names record's options use: interval=10ms); each is
 * given to config_set, and also set as the key's CORSCOPE_* variable, which
 * config_from_env then reads all at once.  A value config_set accepts must
 * come back the same through its text form (config_value_text), which is
 * how `corscope record` hands its settings to the agent, and the output
 * pattern must expand into any buffer without overrunning it.  The same
 * bytes are also read whole as the text form an attach carries in its client
 * data (config_from_text): what it accepts must write back (config_to_text)
 * and read again to the same settings.  Seeds: the good and bad values of
 * the unit and end-to-end tests.
 */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define KEY_NAME(k, env) #k,
static const char *const keys[] = {CONFIG_KEYS(KEY_NAME)};
#undef KEY_NAME
#define KEY_COUNT (sizeof keys / sizeof keys[0])

/* The same setting, read back from its text form. */
static void round_trip(const struct config *c, const char *key)
{
    char text[PATH_MAX + 32], err[256];
    config_value_text(c, key, text, sizeof text);
    struct config back = *c;
    if (config_set(&back, key, text, err, sizeof err) < 0 || memcmp(&back, c, sizeof back) != 0)
        abort();
}

/* The environment variable of a setting ("interval" -> "CORSCOPE_INTERVAL"). */
static const char *env_name(const char *key)
{
#define NAME(k, env) \
    if (!strcmp(key, #k)) \
        return env;
    CONFIG_KEYS(NAME)
#undef NAME
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 16384)
        return 0; /* lines longer than any setting: nothing new */
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    struct config c;
    config_defaults(&c);
    char err[256];
    for (char *line = text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *value = strchr(line, '=');
        if (!value)
            continue;
        *value++ = '\0';
        if (config_set(&c, line, value, err, sizeof err) == 0)
            round_trip(&c, line);
        else if (!memchr(err, '\0', sizeof err))
            abort();
        const char *env = env_name(line);
        if (env)
            setenv(env, value, 1);
    }
    struct config from_env;
    if (config_from_env(&from_env, err, sizeof err) == 0) {
        for (size_t i = 0; i < KEY_COUNT; i++)
            round_trip(&from_env, keys[i]);
    }
    for (size_t i = 0; i < KEY_COUNT; i++)
        unsetenv(env_name(keys[i]));
    /* the output pattern into buffers of every small size, then a big one */
    char out[PATH_MAX + 64];
    for (size_t n = 0; n < 24; n++) {
        memset(out, 'x', sizeof out);
        if (config_expand_output(c.output, 123456, out, n) == 0 && strnlen(out, n) >= n)
            abort();
        if (out[n] != 'x')
            abort(); /* written past the size given */
    }
    (void)config_expand_output(c.output, LONG_MIN, out, sizeof out);
    free(text);
    /* the attach's client data: the raw bytes, NULs and all */
    struct config a, b;
    if (config_from_text(&a, (const char *)data, size, err, sizeof err) == 0) {
        /* compared by their text forms: a string setting set twice keeps
         * the first value's bytes after its NUL */
        static char form[CONFIG_TEXT_MAX], again[CONFIG_TEXT_MAX];
        int n = config_to_text(&a, form, sizeof form);
        if (n < 0 || config_from_text(&b, form, (size_t)n, err, sizeof err) != 0 ||
            config_to_text(&b, again, sizeof again) != n || memcmp(form, again, (size_t)n) != 0)
            abort();
    } else if (!memchr(err, '\0', sizeof err)) {
        abort();
    }
    return 0;
}
