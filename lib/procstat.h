/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_PROCSTAT_H
#define MEMWATCH_PROCSTAT_H

#include <stdint.h>
#include <stddef.h>

/* Fields of /proc/<pid>/stat (proc(5) numbering in comments). */
struct procstat {
	int pid;       /* 1 */
	char comm[64]; /* 2: between the first '(' and the LAST ')', may contain
			* spaces, ')' and any bytes; truncated to fit, NUL-terminated */
	char state;    /* 3 */
	uint64_t minflt, cminflt, majflt, cmajflt; /* 10-13 */
	uint64_t utime, stime;                     /* 14-15, clock ticks */
	uint64_t starttime;                        /* 22, clock ticks since boot */
	uint64_t rss_pages;                        /* 24 */
};

/* Parses one /proc/<pid>/stat record (buf need not be NUL-terminated).
 *
 * buf must hold a single record: comm runs to the last ')' in buf, so text
 * after the record must not contain one. Fields 4-24 must be integers
 * ("-" allowed only in the ones not returned); fields past 24 are ignored
 * (their number changed across kernels). Field 24 must be followed by a
 * blank or a line end: at the end of buf its digits may have been cut by a
 * short read.
 *
 * Returns 0, or -EINVAL when a field is missing or malformed, pid is not in
 * 1..INT_MAX, state is not an ASCII letter or a returned value exceeds
 * UINT64_MAX. out is written only on success. */
int procstat_parse(const char *buf, size_t len, struct procstat *out);

#endif
