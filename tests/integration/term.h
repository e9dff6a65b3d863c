/* SPDX-License-Identifier: GPL-2.0 */
/* A real terminal for the tests: one private tmux server per terminal, its
 * socket in the test's temp tree (ui_main sets TMUX_TMPDIR), one session
 * "top" running a program under a UTF-8 locale; the screen read back with
 * capture-pane. Each server is journaled (uitest.h) before it starts. */
#ifndef MEMWATCHD_ITEST_TERM_H
#define MEMWATCHD_ITEST_TERM_H

#include <stdbool.h>
#include <stddef.h>
#include "uitest.h"

#define EXIT_TIMEOUT_MS 5000

struct term {
	char name[64];    /* tmux -L socket name, private to this test */
	char status[400]; /* where the pane's command writes its exit status */
	char err[400];    /* the pane command's stderr */
	int cols, lines;
};

/* tmux -u -L name ARGS..., bounded; returns the wait status, stdout in *out if asked. */
int tmux(const struct term *t, const char *const *args, char **out);
/* A cols x lines terminal running argv; the pane's shell writes its exit status. */
void term_start(struct term *t, const char *tag, int cols, int lines, const char *const *argv);
/* The screen, lines joined where tmux wrapped them, trailing blanks dropped. */
char *term_capture(const struct term *t);
/* Captures until every needle is on the screen and avoid (if not NULL) is
 * not; the last screen is returned either way, *found says which. */
char *term_wait_for(const struct term *t, const char *const *needles, const char *avoid, int timeout_ms, bool *found);
char *term_wait(const struct term *t, const char *const *needles, int timeout_ms, bool *found);
/* Sends a key; the program must exit 0 within EXIT_TIMEOUT_MS, without a sanitizer report. */
void term_key_exits(const struct term *t, const char *key);
void resize(const struct term *t, int cols, int lines);

/* Display columns of one line of UTF-8 (every character one column). */
size_t columns(const char *line, size_t len);
/* Every line within cols columns, at most lines lines; returns the widest. */
size_t assert_fits(const char *screen, int cols, int lines);
/* The line starting with prefix (with its continuation lines, which start with two blanks). */
bool screen_line(const char *screen, const char *prefix, char *buf, size_t len);
/* "1.5 GiB" and the like, in bytes; NaN if it is not one. */
double parse_bytes(const char *text);

#endif
