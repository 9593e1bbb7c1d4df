/*
 * covdata: the coverage of a run, as every coverage report shows it:
 * assemblies, their source files with each line's hits and branches,
 * classes and methods, and what could not be covered and why.
 *
 * Built from the counter files of every process of the run (format/
 * covfile.h), merged by assembly (MVID) and method: the same method
 * counted in three test hosts adds up.  Each covered assembly is read
 * again from its path (common/pdb/assembly.h): every method the agent
 * would have covered is planned again (format/covplan.h) whether it ran
 * or not, so a method never called still shows its lines, with no hits.
 *
 * Lines follow coverlet's rule, so the two tools agree line by line: a
 * sequence point spanning lines a..b gives each of them its hits, except
 * the lines of the points nested strictly inside it (a lambda inside a
 * multi-line statement), which count their own.  A branch is one way out
 * of a conditional branch, reported on the line of the closest visible
 * sequence point before it.  Compiler-generated code (state machines,
 * lambdas, local functions) is shown under the user's type and method it
 * belongs to.
 */
#ifndef CORSCOPE_COVDATA_H
#define CORSCOPE_COVDATA_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"
#include "format/covplan.h"

struct covdata_counts {
    uint32_t lines, lines_covered;
    uint32_t branches, branches_covered;
    uint32_t methods, methods_covered;
};

struct covdata_line {
    uint32_t line;
    uint64_t hits;
    uint32_t branches, branches_covered;
    uint32_t method; /* the method that put it there first (index in methods) */
};

struct covdata_branch {
    uint32_t line;
    uint32_t il_offset; /* of the branch instruction, in its method */
    uint32_t path;
    uint64_t hits;
    uint32_t method;
};

struct covdata_file {
    char *path;
    uint32_t assembly;
    struct covdata_line *lines; /* sorted by line */
    uint32_t line_count;
    struct covdata_branch *branches; /* sorted by line, method, offset, path */
    uint32_t branch_count;
    struct covdata_counts counts;
};

struct covdata_method {
    char *name;            /* the user's method */
    char *signature;       /* "(Int32, String)" */
    uint32_t klass;
    uint32_t token;
    uint32_t first_line, last_line;
    uint64_t entries;      /* an assembly without PDB: calls counted */
    struct covdata_counts counts;
};

struct covdata_class {
    char *name;            /* "Namespace.Outer+Inner" */
    uint32_t assembly;
    uint32_t file;         /* a class in two files (partial) is two classes */
    struct covdata_counts counts;
};

struct covdata_assembly {
    char *name;
    char *path;
    uint8_t mvid[16];
    uint32_t state;        /* enum covfile_module_state */
    char *note;            /* why it was not covered, or what went wrong; NULL */
    struct covdata_counts counts;
};

struct covdata_skip {
    uint32_t assembly;
    char *method;          /* "Namespace.Type.Method" */
    char *why;
};

struct covdata {
    struct covdata_assembly *assemblies;
    uint32_t assembly_count;
    struct covdata_file *files;
    uint32_t file_count;
    struct covdata_class *classes;
    uint32_t class_count;
    struct covdata_method *methods;
    uint32_t method_count;
    struct covdata_skip *skipped;
    uint32_t skipped_count;
    struct covdata_counts total;
    uint32_t processes;       /* counter files read */
    uint32_t damaged;         /* counter files with records cut short or unreadable */
    uint64_t full_methods;    /* methods a full counter file refused */
};

/* Reads every counter file in dir (cover-*.bin) and builds the model,
 * with the same filters the agent had.  Returns 0, or -1 with a reason
 * (no counter file, none readable, out of memory). */
HIDDEN int covdata_load(struct covdata *d, const char *dir, const char *include,
                        const char *exclude, char *why, size_t why_size);
HIDDEN void covdata_free(struct covdata *d);

/* A rate in percent with one decimal ("85.7"), "-" for 0 of 0. */
HIDDEN void covdata_percent(uint32_t covered, uint32_t total, char *out, size_t size);

#endif
