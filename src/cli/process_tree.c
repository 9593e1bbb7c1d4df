/*
 * process_tree: see process_tree.h.
 */
#include "cli/process_tree.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Is `name` (a file name) one the agent gives a process beside `path`:
 * STEM-PID.EXT or STEM-PID-N.EXT (agent/proctree.c)? */
static int is_beside(const char *path, const char *name)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t stem = dot ? (size_t)(dot - base) : strlen(base);
    const char *ext = base + stem;
    if (strncmp(name, base, stem) != 0 || name[stem] != '-')
        return 0;
    const char *p = name + stem + 1;
    int digits = 0;
    while (*p >= '0' && *p <= '9')
        p++, digits++;
    if (!digits)
        return 0;
    if (*p == '-') {
        int more = 0;
        for (p++; *p >= '0' && *p <= '9'; p++)
            more++;
        if (!more)
            return 0;
    }
    return strcmp(p, ext) == 0;
}

size_t process_tree_list(const char *path, char (*names)[PATH_MAX], size_t max)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    DIR *d = opendir(dir[0] ? dir : "/");
    if (!d)
        return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < max) {
        size_t dl = strlen(dir), nl = strlen(e->d_name);
        if (is_beside(path, e->d_name) && dl + nl + 2 <= PATH_MAX) {
            memcpy(names[n], dir, dl);
            names[n][dl] = '/';
            memcpy(names[n] + dl + 1, e->d_name, nl + 1);
            n++;
        }
    }
    closedir(d);
    qsort(names, n, PATH_MAX, (int (*)(const void *, const void *))strcmp);
    return n;
}

int process_tree_runs_an_application(char **cmd)
{
    const char *base = strrchr(cmd[0], '/') ? strrchr(cmd[0], '/') + 1 : cmd[0];
    if (strcmp(base, "dotnet") != 0)
        return 0;
    for (char **a = cmd + 1; *a; a++) {
        if ((*a)[0] == '-')
            continue;
        return !strcmp(*a, "run") || !strcmp(*a, "test");
    }
    return 0;
}
