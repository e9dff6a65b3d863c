/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCHD_PRIVILEGES_H
#define MEMWATCHD_PRIVILEGES_H

#include <stdbool.h>
#include <stdint.h>

/* Once the BPF programs are attached, keep only the capabilities that
 * re-attaching on reload needs (CAP_BPF, CAP_PERFMON; CAP_SYS_ADMIN on kernels
 * older than 5.8, which have neither) and drop the rest from every set and
 * the bounding set, but for what of extra (1 << CAP_*: what the collectors
 * ask for) the process has. Capabilities are per thread: call before
 * starting any. */
int drop_capabilities(uint64_t extra);

/* Whether this process holds what loading BPF programs takes: CAP_BPF and
 * CAP_PERFMON, or CAP_SYS_ADMIN, in its effective set. */
bool bpf_privileged(void);

#endif
