/*
 * resources: files of the source tree built into the program
 * (tools/embed.c turns each into an array; see the Makefile).
 */
#ifndef CORSCOPE_RESOURCES_H
#define CORSCOPE_RESOURCES_H

/* src/cli/flamegraph.html: the flame graph page, with the placeholder
 * FLAMEGRAPH_PLACEHOLDER where the profile's JSON goes. */
extern const char flamegraph_html[];
extern const unsigned long flamegraph_html_len;
#define FLAMEGRAPH_PLACEHOLDER "/*CORSCOPE_DATA*/"

#endif
