/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_ALLOC_H
#define MEMWATCH_ALLOC_H

/* Orders above the largest the kernel allocates (MAX_PAGE_ORDER, 10 on x86)
 * are clamped into the last slot. */
#define ALLOC_ORDERS 16

/* One per CPU, summed by user space. */
struct alloc_counters {
	__u64 allocs[ALLOC_ORDERS];   /* successful allocations: events, not pages */
	__u64 failures[ALLOC_ORDERS]; /* mm_page_alloc with no page (pfn -1) */
};

#endif
