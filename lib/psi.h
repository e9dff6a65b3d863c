/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_PSI_H
#define MEMWATCH_PSI_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

struct psi_line {
	double avg10, avg60, avg300; /* percent, 0-100, as the kernel prints them */
	uint64_t total_usec;         /* cumulative stall time */
};

/* /proc/pressure/memory and cgroup memory.pressure. */
struct psi_stats {
	struct psi_line some;
	struct psi_line full;
	bool has_some;
	bool has_full; /* "full" is absent for CPU on old kernels; keep it optional */
};

/* Parses PSI text (buf need not be NUL-terminated). Returns 0, or -EINVAL
 * when no "some" line is present or a present line is malformed. */
int psi_parse(const char *buf, size_t len, struct psi_stats *out);

#endif
