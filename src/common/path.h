/*
 * path: the last component of a file path (what follows the last '/', the
 * whole path when it has none), the one way the agent names a module or a
 * library by its file.  Header-only: no state, no allocation.  The CLI's
 * counterpart for the recording's strings is rec_str_basename.
 */
#ifndef CORSCOPE_PATH_H
#define CORSCOPE_PATH_H

#include <string.h>

static inline const char *path_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

#endif
