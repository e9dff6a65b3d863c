/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_KSWAPD_H
#define MEMWATCH_KSWAPD_H

/* Plain types only: this header is shared by the BPF program and user space. */
struct kswapd_counters {
	__u64 wakeups;
};

#endif
