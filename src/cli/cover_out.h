/*
 * cover_out: the writers of `corscope cover`'s reports, one file each
 * (out_cobertura.c, out_lcov.c, out_coverage_json.c, out_coverage_html.c),
 * all over one model (covdata.h); the output's extension picks one.
 */
#ifndef CORSCOPE_COVER_OUT_H
#define CORSCOPE_COVER_OUT_H

#include <stdio.h>

#include "cli/covdata.h"
#include "common/visibility.h"

struct cover_format {
    const char *name;
    const char *extension;
    int (*write)(const struct covdata *d, FILE *out);
};

/* The format for an output path by its extension, or NULL. */
HIDDEN const struct cover_format *cover_format_for(const char *path);
/* "cobertura (.xml), lcov (.info), ..." for messages. */
HIDDEN const char *cover_format_list(void);

/* Cobertura XML (what CI systems and ReportGenerator read). */
HIDDEN int cover_write_cobertura(const struct covdata *d, FILE *out);
/* lcov tracefile (editors' gutters, genhtml). */
HIDDEN int cover_write_lcov(const struct covdata *d, FILE *out);
/* coverlet's JSON layout: assembly, file, class, method, Lines, Branches. */
HIDDEN int cover_write_json(const struct covdata *d, FILE *out);
/* One self-contained HTML page: summary, files and classes, source with hits. */
HIDDEN int cover_write_html(const struct covdata *d, FILE *out);
/* The table coverage tools print at the end: per assembly, line, branch and
 * method coverage, and what was left out. */
HIDDEN void cover_write_summary(const struct covdata *d, FILE *out);

/* Text escaped for XML and HTML (& < > " '). */
HIDDEN void cover_markup_text(FILE *out, const char *s);
/* The longest directory all file paths share, with its final '/' ("" when
 * none); file paths relative to it. */
HIDDEN void cover_common_dir(const struct covdata *d, char *out, size_t size);

#endif
