/* SPDX-License-Identifier: GPL-2.0 */
/* Waking the daemon while a window goes on: its main loop sleeps through
 * the window until the interval ends (daemon/stir.c), unless a program that
 * watches what made it go on writes one record into the shared ring buffer
 * "stir". User space replaces the map with the shared one before load
 * (bpf_map__reuse_fd) and arms each program by setting a .bss variable,
 * which the program clears as it stirs: one record per arming. */
#ifndef MEMWATCH_STIR_BPF_H
#define MEMWATCH_STIR_BPF_H

#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} stir SEC(".maps");

/* Two CPUs may both see it armed: two records, which user space drains together. */
static __always_inline void stir_daemon(void)
{
	__u8 one = 1;

	bpf_ringbuf_output(&stir, &one, sizeof(one), 0);
}

#endif
