/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_FAULTS_H
#define MEMWATCH_FAULTS_H

#define FAULTS_COMM_LEN 16
#define FAULTS_EXITS_RINGBUF_BYTES (256 * 1024)
/* The kfunc walk's record array starts this big and doubles (to
 * max_processes) when a walk finds more processes. */
#define FAULTS_WALK_MIN_SLOTS 4096

/* One record per user thread, written by the task iterator. User space sums
 * the threads of a process; the leader's record also carries the faults of
 * threads that already exited (signal->min_flt), as /proc/PID/stat does.
 * The exit hook writes one per process, with its final totals. */
struct fault_record {
	__u32 tgid;
	__u32 leader; /* 1 on the thread group leader's record */
	__u64 min_flt;
	__u64 maj_flt;
	__u64 start_boottime_ns; /* of the leader: tells a reused pid apart */
	char comm[FAULTS_COMM_LEN]; /* of the leader */
};

#endif
