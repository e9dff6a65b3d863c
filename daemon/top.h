/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCHD_TOP_H
#define MEMWATCHD_TOP_H

/* memwatchd --top [--url URL]: a terminal view of a running daemon, drawn
 * from its /api/v1/windows and /api/v1/events. Returns the exit code. */
int top_run(const char *url);

#endif
