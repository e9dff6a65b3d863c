/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_TOP_VIEW_INTERNAL_H
#define MEMWATCH_TOP_VIEW_INTERNAL_H

/* What the main screen (view.c) shares with the Workloads screen
 * (workloads.c): reading a window's JSON and drawing text. */
#include <curses.h>
#include <jansson.h>
#include <stdbool.h>
#include "macro.h"
#include "view.h"

/* A number member of o; NAN when absent or not a number. */
double num(const json_t *o, const char *key);
/* A string member of o; "" when absent. */
const char *str(const json_t *o, const char *key);
/* The named family's samples in a window, or NULL. */
const json_t *family(const json_t *window, const char *name);
const json_t *last_window(const json_t *doc);

/* Text at (y, x), cut at the right edge; returns the column after it. */
int put(int y, int x, attr_t a, const char *s);
int putf(int y, int x, attr_t a, const char *fmt, ...) _printf_(4, 5);
/* s in exactly width columns: cut, or padded with blanks; a path that does not
 * fit keeps its tail (the cgroup's own name) behind "...". */
void cell(char *buf, size_t len, const char *s, int width, bool keep_tail);
attr_t color(const struct view *v, short pair);
/* The title line: the program, the URL, the clock and the keys. */
void draw_title(const struct view *v);
/* A message wrapped over the lines from y; returns the line after it. */
int draw_wrapped(int y, int x, attr_t a, const char *text);

/* The Workloads screen (key w): the top cgroups of the newest window. */
void workloads_draw(const struct view *v);

#endif
