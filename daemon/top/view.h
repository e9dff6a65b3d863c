/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_TOP_VIEW_H
#define MEMWATCH_TOP_VIEW_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CHART_MAX 1024

/* Available memory (window minimum) of the windows seen so far, oldest
 * first: refreshes fetch only the newest windows and add them here. */
struct chart_history {
	uint64_t seq[CHART_MAX];
	double min[CHART_MAX];
	size_t n;
};

/* Adds every window of a /api/v1/windows answer not yet in h. Returns true
 * when the answer did not reach back to the newest window already kept (a
 * gap: the next refresh should ask for the whole width again). */
bool chart_history_add(struct chart_history *h, const json_t *windows);

struct view {
	const char *url;
	const json_t *windows;       /* the last /api/v1/windows answer, or NULL */
	const json_t *events;        /* the last /api/v1/events answer, or NULL */
	const struct chart_history *history;
	const char *problem_title;   /* e.g. "Cannot reach the daemon", or NULL */
	const char *problem;
	bool utf8;                   /* the terminal's locale is UTF-8 */
	bool colors;                 /* start_color() done */
	bool workloads;              /* the Workloads screen (key w) */
};

/* Colour pairs set up by the caller when the terminal has colours. */
enum {
	PAIR_ERROR = 1,
	PAIR_WARN,
	PAIR_OK,
	PAIR_CHART,
};

/* Draws the whole screen at its current size (LINES x COLS) and refreshes. */
void view_draw(const struct view *v);
/* How many windows back the newest one's process walk ran (0: in it). */
int view_windows_since_fault_walk(const json_t *windows);

/* Text from the daemon (process names, cgroup paths) is shown, never obeyed
 * by the terminal: control characters (C0, DEL, C1) and invalid UTF-8 become
 * '?', and so does every non-ASCII character when the terminal is not UTF-8.
 * At most len - 1 bytes, cut between characters. */
const char *term_safe(char *buf, size_t len, const char *s, bool utf8);

#endif
