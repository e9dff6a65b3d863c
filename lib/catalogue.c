// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "catalogue.h"
#include "macro.h"

/* Each bound written once, as the shortest text that reads back as the same
 * double (what expo_format_number prints), so the value and its le text
 * cannot disagree: 2^k ns for k = 10 ... 34, in seconds. */
#define RECLAIM_SECONDS_BOUND_LIST(X)                                                         \
	X(1.024e-06) X(2.048e-06) X(4.096e-06) X(8.192e-06) X(1.6384e-05) X(3.2768e-05)       \
	X(6.5536e-05) X(0.000131072) X(0.000262144) X(0.000524288) X(0.001048576)             \
	X(0.002097152) X(0.004194304) X(0.008388608) X(0.016777216) X(0.033554432)            \
	X(0.067108864) X(0.134217728) X(0.268435456) X(0.536870912) X(1.073741824)            \
	X(2.147483648) X(4.294967296) X(8.589934592) X(17.179869184)
#define BOUND_VALUE(b) b,
#define BOUND_TEXT(b) #b,

static const double reclaim_seconds_bounds[] = { RECLAIM_SECONDS_BOUND_LIST(BOUND_VALUE) };
static const char *const reclaim_seconds_le[] = { RECLAIM_SECONDS_BOUND_LIST(BOUND_TEXT) };
_Static_assert(ARRAY_SIZE(reclaim_seconds_bounds) == RECLAIM_SECONDS_BOUNDS, "bucket count");

/* Every per-cgroup family's labels: the path, then the workload's names
 * (lib/cgroup_names.h), in the order cgroup_labels_values() gives them. */
#define CGROUP_IDENTITY_LABELS "cgroup", "unit", "namespace", "pod", "container", "container_id"

/* A stall histogram as struct latency_histogram (bpf/latency_hist.h) keeps it:
 * the classic log2 buckets, schema-3 native buckets in the protobuf format
 * (daemon/latency_export.c fills them). A family whose stalls have a process
 * to blame adds METRIC_FLAG_EXEMPLARS. */
#define RECLAIM_SECONDS_HISTOGRAM \
	.n_bounds = RECLAIM_SECONDS_BOUNDS, .bounds = reclaim_seconds_bounds, .le = reclaim_seconds_le, \
	.flags = METRIC_FLAG_NATIVE_HISTOGRAM

const struct metric_desc metric_catalogue[METRIC__COUNT] = {
	/* --- meminfo --- */
	[MW_MEMORY_TOTAL_BYTES] = {
		.name = "memwatch_memory_total_bytes", .type = METRIC_GAUGE, .unit = METRIC_UNIT_BYTES,
		.help = "Total usable RAM (MemTotal).",
		.owner = "meminfo", .source = "MemTotal",
	},
	[MW_MEMORY_FREE_BYTES] = {
		.name = "memwatch_memory_free_bytes", .type = METRIC_GAUGE, .unit = METRIC_UNIT_BYTES,
		.help = "Unused RAM (MemFree).",
		.owner = "meminfo", .source = "MemFree",
	},
	[MW_MEMORY_AVAILABLE_BYTES] = {
		.name = "memwatch_memory_available_bytes", .type = METRIC_GAUGE, .unit = METRIC_UNIT_BYTES,
		.help = "Memory available for new work without swapping (MemAvailable), at the end of the window.",
		.owner = "meminfo", .source = "MemAvailable",
	},
	[MW_MEMORY_AVAILABLE_WINDOW_MIN_BYTES] = {
		.name = "memwatch_memory_available_window_min_bytes", .type = METRIC_GAUGE, .unit = METRIC_UNIT_BYTES,
		.help = "Lowest MemAvailable sampled during the window.",
		.owner = "meminfo", .source = "MemAvailable",
	},
	[MW_MEMORY_AVAILABLE_WINDOW_MAX_BYTES] = {
		.name = "memwatch_memory_available_window_max_bytes", .type = METRIC_GAUGE, .unit = METRIC_UNIT_BYTES,
		.help = "Highest MemAvailable sampled during the window.",
		.owner = "meminfo", .source = "MemAvailable",
	},
	[MW_MEMORY_AVAILABLE_RATIO] = {
		.name = "memwatch_memory_available_ratio", .type = METRIC_GAUGE, .unit = METRIC_UNIT_RATIO,
		.help = "MemAvailable / MemTotal, 0 to 1.",
		.owner = "meminfo", .source = "MemAvailable / MemTotal",
	},
	[MW_MEMORY_CACHED_BYTES] = {
		.name = "memwatch_memory_cached_bytes", .type = METRIC_GAUGE, .unit = METRIC_UNIT_BYTES,
		.help = "Page cache (Cached), excluding swap cache.",
		.owner = "meminfo", .source = "Cached",
	},
	[MW_MEMORY_BUFFERS_BYTES] = {
		.name = "memwatch_memory_buffers_bytes", .type = METRIC_GAUGE, .unit = METRIC_UNIT_BYTES,
		.help = "Block device buffers (Buffers).",
		.owner = "meminfo", .source = "Buffers",
	},
	[MW_MEMORY_ANON_BYTES] = {
		.name = "memwatch_memory_anon_bytes", .type = METRIC_GAUGE, .unit = METRIC_UNIT_BYTES,
		.help = "Anonymous memory mapped into user space (AnonPages).",
		.owner = "meminfo", .source = "AnonPages",
	},
	[MW_MEMORY_SHMEM_BYTES] = {
		.name = "memwatch_memory_shmem_bytes", .type = METRIC_GAUGE, .unit = METRIC_UNIT_BYTES,
		.help = "Shared memory and tmpfs (Shmem).",
		.owner = "meminfo", .source = "Shmem",
	},
	[MW_MEMORY_SLAB_RECLAIMABLE_BYTES] = {
		.name = "memwatch_memory_slab_reclaimable_bytes", .type = METRIC_GAUGE, .unit = METRIC_UNIT_BYTES,
		.help = "Reclaimable slab (SReclaimable).",
		.owner = "meminfo", .source = "SReclaimable",
	},
	[MW_MEMORY_DIRTY_BYTES] = {
		.name = "memwatch_memory_dirty_bytes", .type = METRIC_GAUGE, .unit = METRIC_UNIT_BYTES,
		.help = "Memory waiting to be written back (Dirty).",
		.owner = "meminfo", .source = "Dirty",
	},
	[MW_MEMORY_SWAP_TOTAL_BYTES] = {
		.name = "memwatch_memory_swap_total_bytes", .type = METRIC_GAUGE, .unit = METRIC_UNIT_BYTES,
		.help = "Total swap space (SwapTotal).",
		.owner = "meminfo", .source = "SwapTotal",
	},
	[MW_MEMORY_SWAP_FREE_BYTES] = {
		.name = "memwatch_memory_swap_free_bytes", .type = METRIC_GAUGE, .unit = METRIC_UNIT_BYTES,
		.help = "Unused swap space (SwapFree).",
		.owner = "meminfo", .source = "SwapFree",
	},
	[MW_MEMORY_AVAILABLE_SLOPE_BYTES_PER_SECOND] = {
		.name = "memwatch_memory_available_slope_bytes_per_second", .type = METRIC_GAUGE, .unit = METRIC_UNIT_BYTES_PER_SECOND,
		.help = "Least-squares slope of MemAvailable over the last exhaustion_horizon; negative when memory is being used up.",
		.owner = "meminfo", .source = "MemAvailable samples",
	},
	[MW_MEMORY_EXHAUSTION_ETA_SECONDS] = {
		.name = "memwatch_memory_exhaustion_eta_seconds", .type = METRIC_GAUGE, .unit = METRIC_UNIT_SECONDS,
		.help = "Seconds until MemAvailable reaches zero at the current slope; +Inf when it is not falling.",
		.owner = "meminfo", .source = "slope",
	},
	[MW_MEMORY_WINDOW_SAMPLES] = {
		.name = "memwatch_memory_window_samples", .type = METRIC_GAUGE, .unit = METRIC_UNIT_NONE,
		.help = "Number of available-memory samples in the window: the in-kernel sampler's and the window's last /proc/meminfo read.",
		.owner = "meminfo", .source = "in-kernel timer, or `/proc/meminfo` samples",
	},
	[MW_MEMORY_SAMPLER_SECONDS_TOTAL] = {
		.name = "memwatch_memory_sampler_seconds_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_SECONDS,
		.help = "Time the in-kernel sampler's program spent computing available memory (in interrupt context: charged to no process).",
		.owner = "meminfo", .source = "bpf_ktime_get_ns() around the program",
	},

	/* --- psi --- */
	[MW_PRESSURE_MEMORY_SOME_SECONDS_TOTAL] = {
		.name = "memwatch_pressure_memory_some_seconds_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_SECONDS,
		.help = "Time in which at least one task was stalled on memory (PSI some).",
		.owner = "psi", .source = "`some total=` (µs)",
	},
	[MW_PRESSURE_MEMORY_FULL_SECONDS_TOTAL] = {
		.name = "memwatch_pressure_memory_full_seconds_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_SECONDS,
		.help = "Time in which all non-idle tasks were stalled on memory at once (PSI full).",
		.owner = "psi", .source = "`full total=`",
	},
	[MW_PRESSURE_MEMORY_SOME_AVG10_RATIO] = {
		.name = "memwatch_pressure_memory_some_avg10_ratio", .type = METRIC_GAUGE, .unit = METRIC_UNIT_RATIO,
		.help = "PSI memory some, 10 s running average, 0 to 1.",
		.owner = "psi", .source = "`some avg10=` / 100",
	},
	[MW_PRESSURE_MEMORY_SOME_AVG60_RATIO] = {
		.name = "memwatch_pressure_memory_some_avg60_ratio", .type = METRIC_GAUGE, .unit = METRIC_UNIT_RATIO,
		.help = "PSI memory some, 60 s running average, 0 to 1.",
		.owner = "psi", .source = "`some avg60=` / 100",
	},
	[MW_PRESSURE_MEMORY_SOME_AVG300_RATIO] = {
		.name = "memwatch_pressure_memory_some_avg300_ratio", .type = METRIC_GAUGE, .unit = METRIC_UNIT_RATIO,
		.help = "PSI memory some, 300 s running average, 0 to 1.",
		.owner = "psi", .source = "`some avg300=` / 100",
	},
	[MW_PRESSURE_MEMORY_FULL_AVG10_RATIO] = {
		.name = "memwatch_pressure_memory_full_avg10_ratio", .type = METRIC_GAUGE, .unit = METRIC_UNIT_RATIO,
		.help = "PSI memory full, 10 s running average, 0 to 1.",
		.owner = "psi", .source = "`full avg10=` / 100",
	},
	[MW_PRESSURE_MEMORY_FULL_AVG60_RATIO] = {
		.name = "memwatch_pressure_memory_full_avg60_ratio", .type = METRIC_GAUGE, .unit = METRIC_UNIT_RATIO,
		.help = "PSI memory full, 60 s running average, 0 to 1.",
		.owner = "psi", .source = "`full avg60=` / 100",
	},
	[MW_PRESSURE_MEMORY_FULL_AVG300_RATIO] = {
		.name = "memwatch_pressure_memory_full_avg300_ratio", .type = METRIC_GAUGE, .unit = METRIC_UNIT_RATIO,
		.help = "PSI memory full, 300 s running average, 0 to 1.",
		.owner = "psi", .source = "`full avg300=` / 100",
	},

	/* --- kswapd --- */
	[MW_KSWAPD_WAKEUPS_TOTAL] = {
		.name = "memwatch_kswapd_wakeups_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Times a kswapd thread woke up to balance a node.",
		.owner = "kswapd", .source = "`mm_vmscan_kswapd_wake`, counted in the kernel",
	},
	[MW_KSWAPD_AWAKE_SECONDS_TOTAL] = {
		.name = "memwatch_kswapd_awake_seconds_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_SECONDS,
		.help = "Time kswapd threads spent awake (wake to sleep), summed over nodes, including a stretch still running.",
		.owner = "kswapd", .source = "`kswapd_wake` → `kswapd_sleep` per node",
	},
	[MW_KSWAPD_WAKEUP_REQUESTS_TOTAL] = {
		.name = "memwatch_kswapd_wakeup_requests_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Times an allocation asked kswapd to wake (mm_vmscan_wakeup_kswapd), whether or not it was asleep.",
		.owner = "kswapd", .source = "`mm_vmscan_wakeup_kswapd`",
	},

	/* --- reclaim --- */
	[MW_DIRECT_RECLAIM_TOTAL] = {
		.name = "memwatch_direct_reclaim_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Direct reclaim stalls: an allocating task had to reclaim memory itself.",
		.owner = "reclaim", .source = "BPF on `vmscan:mm_vmscan_*_reclaim_{begin,end}`",
	},
	[MW_MEMCG_RECLAIM_TOTAL] = {
		.name = "memwatch_memcg_reclaim_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Memory cgroup limit reclaims: a task charging a cgroup at its limit had to reclaim.",
		.owner = "reclaim", .source = "BPF on `vmscan:mm_vmscan_*_reclaim_{begin,end}`",
	},
	[MW_MEMCG_SOFTLIMIT_RECLAIM_TOTAL] = {
		.name = "memwatch_memcg_softlimit_reclaim_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Memory cgroup soft limit reclaims (cgroup v1, from kswapd or direct reclaim).",
		.owner = "reclaim", .source = "BPF on `vmscan:mm_vmscan_*_reclaim_{begin,end}`",
	},
	[MW_DIRECT_RECLAIM_SECONDS] = {
		.name = "memwatch_direct_reclaim_seconds", .type = METRIC_HISTOGRAM, .unit = METRIC_UNIT_SECONDS,
		.help = "Direct reclaim stall time per stall; buckets are powers of two nanoseconds.",
		.owner = "reclaim", .source = "BPF on `vmscan:mm_vmscan_*_reclaim_{begin,end}`",
		RECLAIM_SECONDS_HISTOGRAM | METRIC_FLAG_EXEMPLARS,
	},
	[MW_MEMCG_RECLAIM_SECONDS] = {
		.name = "memwatch_memcg_reclaim_seconds", .type = METRIC_HISTOGRAM, .unit = METRIC_UNIT_SECONDS,
		.help = "Memory cgroup limit reclaim stall time per stall.",
		.owner = "reclaim", .source = "BPF on `vmscan:mm_vmscan_*_reclaim_{begin,end}`",
		RECLAIM_SECONDS_HISTOGRAM | METRIC_FLAG_EXEMPLARS,
	},
	[MW_MEMCG_SOFTLIMIT_RECLAIM_SECONDS] = {
		.name = "memwatch_memcg_softlimit_reclaim_seconds", .type = METRIC_HISTOGRAM, .unit = METRIC_UNIT_SECONDS,
		.help = "Memory cgroup soft limit reclaim time per run.",
		.owner = "reclaim", .source = "BPF on `vmscan:mm_vmscan_*_reclaim_{begin,end}`",
		RECLAIM_SECONDS_HISTOGRAM,
	},
	[MW_DIRECT_RECLAIM_PAGES_TOTAL] = {
		.name = "memwatch_direct_reclaim_pages_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Pages reclaimed by direct reclaim.",
		.owner = "reclaim", .source = "BPF on `vmscan:mm_vmscan_*_reclaim_{begin,end}`",
	},
	[MW_MEMCG_RECLAIM_PAGES_TOTAL] = {
		.name = "memwatch_memcg_reclaim_pages_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Pages reclaimed by memory cgroup limit reclaim.",
		.owner = "reclaim", .source = "BPF on `vmscan:mm_vmscan_*_reclaim_{begin,end}`",
	},
	[MW_MEMCG_SOFTLIMIT_RECLAIM_PAGES_TOTAL] = {
		.name = "memwatch_memcg_softlimit_reclaim_pages_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Pages reclaimed by memory cgroup soft limit reclaim.",
		.owner = "reclaim", .source = "BPF on `vmscan:mm_vmscan_*_reclaim_{begin,end}`",
	},
	[MW_PROCESS_DIRECT_RECLAIM_SECONDS_TOTAL] = {
		.name = "memwatch_process_direct_reclaim_seconds_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_SECONDS,
		.help = "Time the process spent stalled in direct reclaim.",
		.n_labels = 2, .labels = { "pid", "comm" },
		.owner = "reclaim", .source = "BPF on `vmscan:mm_vmscan_*_reclaim_{begin,end}`",
	},
	[MW_PROCESS_DIRECT_RECLAIMS_TOTAL] = {
		.name = "memwatch_process_direct_reclaims_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Direct reclaim stalls of the process.",
		.n_labels = 2, .labels = { "pid", "comm" },
		.owner = "reclaim", .source = "BPF on `vmscan:mm_vmscan_*_reclaim_{begin,end}`",
	},
	[MW_PROCESS_MEMCG_RECLAIM_SECONDS_TOTAL] = {
		.name = "memwatch_process_memcg_reclaim_seconds_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_SECONDS,
		.help = "Time the process spent stalled in memory cgroup limit reclaim.",
		.n_labels = 2, .labels = { "pid", "comm" },
		.owner = "reclaim", .source = "BPF on `vmscan:mm_vmscan_*_reclaim_{begin,end}`",
	},
	[MW_PROCESS_MEMCG_RECLAIMS_TOTAL] = {
		.name = "memwatch_process_memcg_reclaims_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Memory cgroup limit reclaim stalls of the process.",
		.n_labels = 2, .labels = { "pid", "comm" },
		.owner = "reclaim", .source = "BPF on `vmscan:mm_vmscan_*_reclaim_{begin,end}`",
	},
	[MW_CGROUP_RECLAIM_SECONDS_TOTAL] = {
		.name = "memwatch_cgroup_reclaim_seconds_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_SECONDS,
		.help = "Time tasks of the memory cgroup spent stalled in direct or memcg reclaim.",
		.n_labels = 6, .labels = { CGROUP_IDENTITY_LABELS },
		.owner = "reclaim", .source = "BPF on `vmscan:mm_vmscan_*_reclaim_{begin,end}`",
	},
	[MW_CGROUP_RECLAIMS_TOTAL] = {
		.name = "memwatch_cgroup_reclaims_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Direct and memcg reclaim stalls of tasks in the memory cgroup.",
		.n_labels = 6, .labels = { CGROUP_IDENTITY_LABELS },
		.owner = "reclaim", .source = "BPF on `vmscan:mm_vmscan_*_reclaim_{begin,end}`",
	},
	[MW_RECLAIM_UNMATCHED_ENDS_TOTAL] = {
		.name = "memwatch_reclaim_unmatched_ends_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Reclaim end events without a recorded begin (attached mid-stall, or the start map was full).",
		.owner = "reclaim", .source = "BPF on `vmscan:mm_vmscan_*_reclaim_{begin,end}`",
	},

	/* --- alloc --- */
	[MW_PAGE_ALLOCATIONS_TOTAL] = {
		.name = "memwatch_page_allocations_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Successful page allocations (events) by order; an order-n event is 2^n pages.",
		.n_labels = 1, .labels = { "order" },
		.owner = "alloc", .source = "per-CPU counters in the kernel; **only with `trace = yes`**",
	},
	[MW_PAGE_ALLOCATED_BYTES_TOTAL] = {
		.name = "memwatch_page_allocated_bytes_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_BYTES,
		.help = "Bytes handed out by the page allocator: pages allocated times the page size.",
		.owner = "alloc", .source = "pages × page size",
	},
	[MW_PAGE_ALLOCATED_PAGES_TOTAL] = {
		.name = "memwatch_page_allocated_pages_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Pages handed out by the page allocator (/proc/vmstat pgalloc_*; with trace = yes, 2^order per traced allocation).",
		.owner = "alloc", .source = "`trace = no`: `/proc/vmstat`, the sum of every `pgalloc_<zone>` line; `trace = yes`: Σ allocations × 2^order",
	},
	[MW_PAGE_ALLOCATION_FAILURES_TOTAL] = {
		.name = "memwatch_page_allocation_failures_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Page allocations that returned no page, by order.",
		.n_labels = 1, .labels = { "order" },
		.owner = "alloc", .source = "`mm_page_alloc` with no page (`pfn == -1`); **only with `trace = yes`**",
	},
	[MW_PAGE_FREES_TOTAL] = {
		.name = "memwatch_page_frees_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Pages freed to the page allocator (/proc/vmstat pgfree).",
		.owner = "alloc", .source = "`/proc/vmstat` `pgfree` (both modes)",
	},

	/* --- alloc: compaction as the kernel counts it (/proc/vmstat) --- */
	[MW_COMPACTION_KERNEL_STALLS_TOTAL] = {
		.name = "memwatch_compaction_kernel_stalls_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Direct compactions an allocation stalled in, as the kernel counts them (/proc/vmstat compact_stall).",
		.owner = "alloc", .source = "`/proc/vmstat` `compact_stall`",
	},
	[MW_COMPACTION_KERNEL_RESULTS_TOTAL] = {
		.name = "memwatch_compaction_kernel_results_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Direct compactions by outcome: success (the allocation then got its page) or fail.",
		.n_labels = 1, .labels = { "result" },
		.owner = "alloc", .source = "`/proc/vmstat` `compact_success`, `compact_fail`",
	},
	[MW_KCOMPACTD_WAKEUPS_TOTAL] = {
		.name = "memwatch_kcompactd_wakeups_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Times kcompactd woke up to compact in the background (/proc/vmstat compact_daemon_wake).",
		.owner = "alloc", .source = "`/proc/vmstat` `compact_daemon_wake`",
	},

	/* --- compaction: stalls timed per thread in the kernel --- */
	[MW_COMPACTION_STALLS_TOTAL] = {
		.name = "memwatch_compaction_stalls_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Direct compaction stalls: try_to_compact_pages() calls that compacted, deferred or found a zone ready (what /proc/vmstat compact_stall counts), seen in the kernel.",
		.owner = "compaction", .source = "BPF: fentry/fexit on `try_to_compact_pages`, else `compaction:mm_compaction_*` tracepoints",
	},
	[MW_COMPACTION_STALL_SECONDS] = {
		.name = "memwatch_compaction_stall_seconds", .type = METRIC_HISTOGRAM, .unit = METRIC_UNIT_SECONDS,
		.help = "Direct compaction stall time per stall; buckets are powers of two nanoseconds.",
		.owner = "compaction", .source = "BPF: fentry/fexit on `try_to_compact_pages`, else `compaction:mm_compaction_*` tracepoints",
		RECLAIM_SECONDS_HISTOGRAM | METRIC_FLAG_EXEMPLARS,
	},
	[MW_COMPACTION_RUNS_TOTAL] = {
		.name = "memwatch_compaction_runs_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Zone compactions (compact_zone(), mm_compaction_begin to mm_compaction_end) by who ran them: direct, kcompactd or manual.",
		.n_labels = 1, .labels = { "task" },
		.owner = "compaction", .source = "BPF on `compaction:mm_compaction_{begin,end}`",
	},
	[MW_COMPACTION_RUN_SECONDS_TOTAL] = {
		.name = "memwatch_compaction_run_seconds_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_SECONDS,
		.help = "Time spent in zone compactions, by who ran them: direct, kcompactd or manual.",
		.n_labels = 1, .labels = { "task" },
		.owner = "compaction", .source = "BPF on `compaction:mm_compaction_{begin,end}`",
	},

	/* --- faults --- */
	[MW_PROCESS_MAJOR_FAULTS_TOTAL] = {
		.name = "memwatch_process_major_faults_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Major page faults of the process (all its threads, live and exited).",
		.n_labels = 2, .labels = { "pid", "comm" },
		.owner = "faults", .source = "`task->maj_flt`, summed over threads, plus exited threads' (`signal->maj_flt`)",
	},
	[MW_PROCESS_MINOR_FAULTS_TOTAL] = {
		.name = "memwatch_process_minor_faults_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Minor page faults of the process (all its threads, live and exited).",
		.n_labels = 2, .labels = { "pid", "comm" },
		.owner = "faults", .source = "`task->min_flt`, likewise",
	},
	[MW_MAJOR_FAULTS_TOTAL] = {
		.name = "memwatch_major_faults_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Major page faults, system-wide (/proc/vmstat pgmajfault).",
		.owner = "faults", .source = "`/proc/vmstat` `pgmajfault`",
	},
	[MW_MINOR_FAULTS_TOTAL] = {
		.name = "memwatch_minor_faults_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Minor page faults, system-wide (/proc/vmstat pgfault - pgmajfault).",
		.owner = "faults", .source = "`pgfault - pgmajfault`",
	},
	[MW_FAULT_TRACKED_PROCESSES] = {
		.name = "memwatch_fault_tracked_processes", .type = METRIC_GAUGE, .unit = METRIC_UNIT_NONE,
		.help = "Processes whose faults the last walk read.",
		.owner = "faults", .source = "BPF task iterator (`iter/task`), `/proc/PID/stat` as fallback",
	},

	/* --- faults: the task walk's schedule --- */
	[MW_FAULT_PROCESS_AGE_SECONDS] = {
		.name = "memwatch_fault_process_age_seconds", .type = METRIC_GAUGE, .unit = METRIC_UNIT_SECONDS,
		.help = "Age of the per-process fault counts in this window: time since the walk of every process that read them.",
		.owner = "faults", .source = "the daemon",
	},
	[MW_FAULT_PROCESS_WALKS_TOTAL] = {
		.name = "memwatch_fault_process_walks_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Walks of every process (task iterator or /proc) that read the per-process fault counts.",
		.owner = "faults", .source = "the daemon",
	},
	[MW_FAULT_PROCESS_EXITS_TOTAL] = {
		.name = "memwatch_fault_process_exits_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Processes whose final fault counts the exit hook recorded, applied at the next walk.",
		.owner = "faults", .source = "BPF tp_btf/sched_process_exit",
	},
	[MW_FAULT_PROCESS_EXITS_DROPPED_TOTAL] = {
		.name = "memwatch_fault_process_exits_dropped_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Process exits whose final fault counts were lost: the ring buffer or the pending list was full.",
		.owner = "faults", .source = "BPF tp_btf/sched_process_exit",
	},

	/* --- faults: thrashing and huge pages (/proc/vmstat) --- */
	[MW_MEMORY_REFAULTS_TOTAL] = {
		.name = "memwatch_memory_refaults_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Pages read back soon after the kernel evicted them (shadow entry found), system-wide, by type.",
		.n_labels = 1, .labels = { "type" },
		.owner = "faults", .source = "`/proc/vmstat` `workingset_refault_anon`, `_file` (5.9+); `workingset_refault` as `file` before",
	},
	[MW_MEMORY_REFAULT_ACTIVATIONS_TOTAL] = {
		.name = "memwatch_memory_refault_activations_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Refaulted pages put straight on the active list (evicted too early: thrashing), by type.",
		.n_labels = 1, .labels = { "type" },
		.owner = "faults", .source = "`/proc/vmstat` `workingset_activate_anon`, `_file`; `workingset_activate` as `file` before 5.9",
	},
	[MW_MEMORY_REFAULT_RESTORES_TOTAL] = {
		.name = "memwatch_memory_refault_restores_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Refaulted pages that were part of the workingset when evicted, by type.",
		.n_labels = 1, .labels = { "type" },
		.owner = "faults", .source = "`/proc/vmstat` `workingset_restore_anon`, `_file`; `workingset_restore` as `file` (5.1 to 5.8)",
	},
	[MW_THP_FAULT_FALLBACKS_TOTAL] = {
		.name = "memwatch_thp_fault_fallbacks_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Page faults that wanted a transparent huge page and fell back to small pages, by reason.",
		.n_labels = 1, .labels = { "reason" },
		.owner = "faults", .source = "`/proc/vmstat` `thp_fault_fallback` (`fallback`), `thp_fault_fallback_charge` (`charge`, 5.9+)",
	},
	[MW_THP_ALLOCATION_FAILURES_TOTAL] = {
		.name = "memwatch_thp_allocation_failures_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Transparent huge page allocations outside the anonymous fault path that failed, by kind.",
		.n_labels = 1, .labels = { "kind" },
		.owner = "faults", .source = "`/proc/vmstat` `thp_collapse_alloc_failed`, `thp_file_fallback`, `thp_file_fallback_charge`, `thp_zero_page_alloc_failed`",
	},

	/* --- memavail --- */
	[MW_MEMORY_AVAILABLE_AT_PRESSURE_BYTES] = {
		.name = "memwatch_memory_available_at_pressure_bytes", .type = METRIC_GAUGE, .unit = METRIC_UNIT_BYTES,
		.help = "Lowest available memory recorded at a pressure instant in this window; absent when there was none.",
		.owner = "memavail", .source = "the events of the pressure instants",
	},
	[MW_PRESSURE_EVENTS_TOTAL] = {
		.name = "memwatch_pressure_events_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Pressure instants seen in the kernel, by kind (before the rate gate).",
		.n_labels = 1, .labels = { "kind" },
		.owner = "daemon", .source = "counters in the BPF programs, before the rate gate",
	},
	[MW_MEMORY_AVAILABLE_KERNEL_BYTES] = {
		.name = "memwatch_memory_available_kernel_bytes", .type = METRIC_GAUGE, .unit = METRIC_UNIT_BYTES,
		.help = "The last value si_mem_available() returned, caught by fexit or kretprobe.",
		.owner = "memavail", .source = "fexit or kretprobe on `si_mem_available()`",
	},
	[MW_MEMORY_AVAILABLE_COMPUTED_BYTES] = {
		.name = "memwatch_memory_available_computed_bytes", .type = METRIC_GAUGE, .unit = METRIC_UNIT_BYTES,
		.help = "Available memory computed in BPF from zone and node counters at the end of the window (counters method).",
		.owner = "memavail", .source = "zone and node counters read in BPF",
	},
	[MW_MEMAVAIL_COUNTERS_ERROR_RATIO] = {
		.name = "memwatch_memavail_counters_error_ratio", .type = METRIC_GAUGE, .unit = METRIC_UNIT_RATIO,
		.help = "|computed - MemAvailable| / MemAvailable at the end of the window; above 0.02 at start-up the counters method is not used.",
		.owner = "memavail", .source = "computed vs. `/proc/meminfo` MemAvailable",
	},
	[MW_MEMAVAIL_TOTAL_RESERVE_BYTES] = {
		.name = "memwatch_memavail_total_reserve_bytes", .type = METRIC_GAUGE, .unit = METRIC_UNIT_BYTES,
		.help = "The kernel's total reserve (high watermarks and lowmem reserves) from /proc/zoneinfo, used by the counters method.",
		.owner = "memavail", .source = "`/proc/zoneinfo`",
	},
	[MW_MEMAVAIL_RESERVE_REFRESHES_TOTAL] = {
		.name = "memwatch_memavail_reserve_refreshes_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Times /proc/zoneinfo was re-read because the kernel set up its watermarks again (kmem:mm_setup_per_zone_wmarks).",
		.owner = "memavail", .source = "`kmem:mm_setup_per_zone_wmarks`",
	},

	/* --- oom --- */
	[MW_OOM_KILLS_TOTAL] = {
		.name = "memwatch_oom_kills_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Processes chosen and killed by the kernel's OOM killer, by what ran out: memcg (a memory cgroup's limit), global, cpuset or mempolicy.",
		.n_labels = 1, .labels = { "scope" },
		.flags = METRIC_FLAG_SERIES_FROM_START,
		.owner = "oom", .source = "BPF on `oom:mark_victim`; scope from `oom_kill_process()`'s oom_control or the memory cgroups' page counters",
	},
	[MW_CGROUP_OOM_KILLS_TOTAL] = {
		.name = "memwatch_cgroup_oom_kills_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "OOM kills by the victim's memory cgroup (path below the hierarchy root) and scope.",
		.n_labels = 7, .labels = { CGROUP_IDENTITY_LABELS, "scope" },
		.owner = "oom", .source = "BPF on `oom:mark_victim`",
	},
	[MW_LAST_OOM_KILL_TIMESTAMP_SECONDS] = {
		.name = "memwatch_last_oom_kill_timestamp_seconds", .type = METRIC_GAUGE, .unit = METRIC_UNIT_SECONDS,
		.help = "Wall-clock time of the last OOM kill seen since the daemon started.",
		.owner = "oom", .source = "BPF on `oom:mark_victim`",
	},
	[MW_OOM_FEATURE_INFO] = {
		.name = "memwatch_oom_feature_info", .type = METRIC_GAUGE, .unit = METRIC_UNIT_NONE,
		.help = "Where each part of a kill's record comes from on this kernel (source \"none\": not available, the daemon log says why).",
		.n_labels = 2, .labels = { "feature", "source" },
		.owner = "oom", .source = "the attach points that loaded",
	},
	[MW_USERSPACE_KILLS_TOTAL] = {
		.name = "memwatch_userspace_kills_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Kills by a user-space OOM killer ([collector.oom] userspace_killers): a SIGTERM or SIGKILL it sent; a burst to one cgroup is one kill, a process counts once.",
		.n_labels = 1, .labels = { "killer" },
		.flags = METRIC_FLAG_SERIES_FROM_START,
		.owner = "oom", .source = "BPF on `signal:signal_generate`",
	},
	[MW_USERSPACE_KILL_SIGNALS_TOTAL] = {
		.name = "memwatch_userspace_kill_signals_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Every SIGTERM and SIGKILL a user-space OOM killer sent to another process, before folding them into kills.",
		.n_labels = 1, .labels = { "killer" },
		.flags = METRIC_FLAG_SERIES_FROM_START,
		.owner = "oom", .source = "BPF on `signal:signal_generate`",
	},
	[MW_CGROUP_USERSPACE_KILLS_TOTAL] = {
		.name = "memwatch_cgroup_userspace_kills_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "User-space OOM kills by the victim's memory cgroup and killer.",
		.n_labels = 7, .labels = { CGROUP_IDENTITY_LABELS, "killer" },
		.owner = "oom", .source = "BPF on `signal:signal_generate`",
	},
	[MW_LAST_USERSPACE_KILL_TIMESTAMP_SECONDS] = {
		.name = "memwatch_last_userspace_kill_timestamp_seconds", .type = METRIC_GAUGE, .unit = METRIC_UNIT_SECONDS,
		.help = "Wall-clock time of the last user-space OOM kill seen since the daemon started.",
		.owner = "oom", .source = "BPF on `signal:signal_generate`",
	},

	/* --- cgroup --- */
	[MW_CGROUP_MEMORY_USAGE_BYTES] = {
		.name = "memwatch_cgroup_memory_usage_bytes", .type = METRIC_GAUGE, .unit = METRIC_UNIT_BYTES,
		.help = "Memory charged to the cgroup and its descendants (memory.current, v1 memory.usage_in_bytes).",
		.n_labels = 6, .labels = { CGROUP_IDENTITY_LABELS },
		.owner = "cgroup", .source = "`memory.current` / `memory.usage_in_bytes`",
	},
	[MW_CGROUP_MEMORY_LIMIT_BYTES] = {
		.name = "memwatch_cgroup_memory_limit_bytes", .type = METRIC_GAUGE, .unit = METRIC_UNIT_BYTES,
		.help = "Hard memory limit (memory.max, v1 memory.limit_in_bytes); absent when unlimited.",
		.n_labels = 6, .labels = { CGROUP_IDENTITY_LABELS },
		.owner = "cgroup", .source = "`memory.max` / `memory.limit_in_bytes`",
	},
	[MW_CGROUP_MEMORY_USAGE_RATIO] = {
		.name = "memwatch_cgroup_memory_usage_ratio", .type = METRIC_GAUGE, .unit = METRIC_UNIT_RATIO,
		.help = "Usage / limit; absent when unlimited.",
		.n_labels = 6, .labels = { CGROUP_IDENTITY_LABELS },
		.owner = "cgroup", .source = "usage / limit",
	},
	[MW_CGROUP_MEMORY_HIGH_BYTES] = {
		.name = "memwatch_cgroup_memory_high_bytes", .type = METRIC_GAUGE, .unit = METRIC_UNIT_BYTES,
		.help = "Throttling threshold memory.high (v2); absent when max.",
		.n_labels = 6, .labels = { CGROUP_IDENTITY_LABELS },
		.owner = "cgroup", .source = "`memory.high` / —",
	},
	[MW_CGROUP_MEMORY_WORKING_SET_BYTES] = {
		.name = "memwatch_cgroup_memory_working_set_bytes", .type = METRIC_GAUGE, .unit = METRIC_UNIT_BYTES,
		.help = "Usage minus inactive file pages, clamped at 0 (as cAdvisor computes it).",
		.n_labels = 6, .labels = { CGROUP_IDENTITY_LABELS },
		.owner = "cgroup", .source = "usage and `memory.stat`",
	},
	[MW_CGROUP_MEMORY_EVENTS_TOTAL] = {
		.name = "memwatch_cgroup_memory_events_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Memory events of the cgroup (v2 memory.events; v1 memory.failcnt as failcnt, memory.oom_control oom_kill).",
		.n_labels = 7, .labels = { CGROUP_IDENTITY_LABELS, "event" },
		.owner = "cgroup", .source = "`memory.events` / `memory.failcnt`, `memory.oom_control`",
	},
	[MW_CGROUP_MEMORY_UNDER_OOM] = {
		.name = "memwatch_cgroup_memory_under_oom", .type = METRIC_GAUGE, .unit = METRIC_UNIT_NONE,
		.help = "1 while the cgroup is under OOM (v1 memory.oom_control under_oom).",
		.n_labels = 6, .labels = { CGROUP_IDENTITY_LABELS },
		.owner = "cgroup", .source = "— / `memory.oom_control` `under_oom`",
	},
	[MW_CGROUP_PRESSURE_MEMORY_SOME_SECONDS_TOTAL] = {
		.name = "memwatch_cgroup_pressure_memory_some_seconds_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_SECONDS,
		.help = "Time in which at least one task of the cgroup stalled on memory (memory.pressure some).",
		.n_labels = 6, .labels = { CGROUP_IDENTITY_LABELS },
		.owner = "cgroup", .source = "`memory.pressure` `some total=` (µs)",
	},
	[MW_CGROUP_PRESSURE_MEMORY_FULL_SECONDS_TOTAL] = {
		.name = "memwatch_cgroup_pressure_memory_full_seconds_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_SECONDS,
		.help = "Time in which all non-idle tasks of the cgroup stalled on memory at once (memory.pressure full).",
		.n_labels = 6, .labels = { CGROUP_IDENTITY_LABELS },
		.owner = "cgroup", .source = "`memory.pressure` `full total=`",
	},
	[MW_CGROUPS_DISCOVERED] = {
		.name = "memwatch_cgroups_discovered", .type = METRIC_GAUGE, .unit = METRIC_UNIT_NONE,
		.help = "Memory cgroups read in the last walk (after include/exclude).",
		.owner = "cgroup", .source = "the walk",
	},
	[MW_CGROUP_WALK_SECONDS] = {
		.name = "memwatch_cgroup_walk_seconds", .type = METRIC_GAUGE, .unit = METRIC_UNIT_SECONDS,
		.help = "Time the last walk over the cgroup trees took.",
		.owner = "cgroup", .source = "the walk",
	},
	[MW_CGROUP_WALK_SKIPPED_TOTAL] = {
		.name = "memwatch_cgroup_walk_skipped_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Cgroups left out of a window because they vanished or a file could not be read during the walk.",
		.owner = "cgroup", .source = "the walk",
	},
	[MW_CGROUP_WALK_TRUNCATED] = {
		.name = "memwatch_cgroup_walk_truncated", .type = METRIC_GAUGE, .unit = METRIC_UNIT_NONE,
		.help = "1 when the last walk stopped at max_cgroups.",
		.owner = "cgroup", .source = "the walk",
	},
	[MW_CGROUP_WALK_CPU_SECONDS] = {
		.name = "memwatch_cgroup_walk_cpu_seconds", .type = METRIC_GAUGE, .unit = METRIC_UNIT_SECONDS,
		.help = "CPU time (user and system) the last walk took; the rest of memwatch_cgroup_walk_seconds was waiting for a CPU.",
		.owner = "cgroup", .source = "the walk",
	},
	[MW_CGROUP_OPEN_FILES] = {
		.name = "memwatch_cgroup_open_files", .type = METRIC_GAUGE, .unit = METRIC_UNIT_NONE,
		.help = "cgroup files the collector keeps open between windows.",
		.owner = "cgroup", .source = "the walk",
	},
	[MW_CGROUP_AGE_SECONDS] = {
		.name = "memwatch_cgroup_age_seconds", .type = METRIC_GAUGE, .unit = METRIC_UNIT_SECONDS,
		.help = "Age of the per-cgroup figures in this window: time since the read of every cgroup that gave them.",
		.owner = "cgroup", .source = "the daemon",
	},
	[MW_CGROUP_READS_TOTAL] = {
		.name = "memwatch_cgroup_reads_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Reads of every cgroup (the cgroup iterator or the walk of cgroupfs) that gave the per-cgroup figures.",
		.owner = "cgroup", .source = "the daemon",
	},
	[MW_CGROUP_INFO] = {
		.name = "memwatch_cgroup_info", .type = METRIC_GAUGE, .unit = METRIC_UNIT_NONE,
		.help = "1 for every cgroup exported, with the names of the workload in it, for joins.",
		.n_labels = 6, .labels = { CGROUP_IDENTITY_LABELS },
		.owner = "cgroup",
		.source = "the path; `kubelet_pods_dir`, `kubelet_containers_dir`, `docker_dir`, `podman_storage_dir`",
	},

	/* --- cgroup: thrashing (memory.stat) --- */
	[MW_CGROUP_MEMORY_REFAULTS_TOTAL] = {
		.name = "memwatch_cgroup_memory_refaults_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Pages of the cgroup (and its descendants) read back soon after their eviction, by type.",
		.n_labels = 7, .labels = { CGROUP_IDENTITY_LABELS, "type" },
		.owner = "cgroup", .source = "`memory.stat` `workingset_refault_anon`, `_file` (v1: `total_` ones); `workingset_refault` as `file` before 5.9",
	},
	[MW_CGROUP_MEMORY_REFAULT_ACTIVATIONS_TOTAL] = {
		.name = "memwatch_cgroup_memory_refault_activations_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Refaulted pages of the cgroup put straight on the active list, by type (v2 only).",
		.n_labels = 7, .labels = { CGROUP_IDENTITY_LABELS, "type" },
		.owner = "cgroup", .source = "`memory.stat` `workingset_activate_anon`, `_file`; `workingset_activate` as `file` before 5.9",
	},
	[MW_CGROUP_MEMORY_REFAULT_RESTORES_TOTAL] = {
		.name = "memwatch_cgroup_memory_refault_restores_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Refaulted pages of the cgroup that were in its workingset when evicted, by type (v2 only).",
		.n_labels = 7, .labels = { CGROUP_IDENTITY_LABELS, "type" },
		.owner = "cgroup", .source = "`memory.stat` `workingset_restore_anon`, `_file`; `workingset_restore` as `file` where an older kernel prints it",
	},

	/* --- cgroup: warning before the OOM --- */
	[MW_CGROUP_MEMORY_LIMIT_ETA_SECONDS] = {
		.name = "memwatch_cgroup_memory_limit_eta_seconds", .type = METRIC_GAUGE, .unit = METRIC_UNIT_SECONDS,
		.help = "Seconds until the cgroup's usage reaches its limit at its least-squares slope over exhaustion_horizon; only while usage rises.",
		.n_labels = 6, .labels = { CGROUP_IDENTITY_LABELS },
		.owner = "cgroup", .source = "usage samples, one per window, and the limit",
	},
	[MW_CGROUP_MEMORY_WINDOW_PEAK_BYTES] = {
		.name = "memwatch_cgroup_memory_window_peak_bytes", .type = METRIC_GAUGE, .unit = METRIC_UNIT_BYTES,
		.help = "Highest usage of the cgroup within this window, by method: fd_reset exact; lifetime_rise exact when the lifetime peak rose in the window, else the window's usage read (a lower bound); sampled the window's usage read.",
		.n_labels = 7, .labels = { CGROUP_IDENTITY_LABELS, "method" },
		.owner = "cgroup", .source = "`memory.peak` (reset per fd from 6.12) / `memory.max_usage_in_bytes`",
	},

	/* --- daemon --- */
	[MW_EVENTS_DROPPED_TOTAL] = {
		.name = "memwatch_events_dropped_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Events lost: buffer full in the kernel (channel ringbuf or perfbuf) or dropped by the consumer (channel consumer).",
		.n_labels = 1, .labels = { "channel" },
		.owner = "daemon", .source = "the shared ring buffer and its consumer",
	},
	[MW_EVENTS_RECEIVED_TOTAL] = {
		.name = "memwatch_events_received_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Events the consumer received, by kind.",
		.n_labels = 1, .labels = { "kind" },
		.owner = "daemon", .source = "the event consumer",
	},
	[MW_EVENTS_GATED_TOTAL] = {
		.name = "memwatch_events_gated_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Events suppressed in the kernel by the rate gate (daemon.event_gate), by kind.",
		.n_labels = 1, .labels = { "kind" },
		.owner = "daemon", .source = "the BPF rate gate",
	},
	[MW_BUILD_INFO] = {
		.name = "memwatch_build_info", .type = METRIC_GAUGE, .unit = METRIC_UNIT_NONE,
		.help = "memwatchd build; always 1.",
		.n_labels = 1, .labels = { "version" },
		.owner = "daemon", .source = "the daemon",
	},
	[MW_COLLECTOR_UP] = {
		.name = "memwatch_collector_up", .type = METRIC_GAUGE, .unit = METRIC_UNIT_NONE,
		.help = "1 when the collector produced data in this window, else 0.",
		.n_labels = 1, .labels = { "collector" },
		.owner = "daemon", .source = "the daemon",
	},
	[MW_COLLECTOR_INFO] = {
		.name = "memwatch_collector_info", .type = METRIC_GAUGE, .unit = METRIC_UNIT_NONE,
		.help = "Collector state: mode is the attach flavour, or the source or method used without one; "
		 "reason is empty unless degraded or failed.",
		.n_labels = 4, .labels = { "collector", "state", "mode", "reason" },
		.owner = "daemon", .source = "the daemon",
	},
	[MW_COLLECTOR_DURATION_SECONDS] = {
		.name = "memwatch_collector_duration_seconds", .type = METRIC_GAUGE, .unit = METRIC_UNIT_SECONDS,
		.help = "Time the collector spent sampling and collecting in the last window.",
		.n_labels = 1, .labels = { "collector" },
		.owner = "daemon", .source = "the daemon",
	},
	[MW_COLLECTOR_ERRORS_TOTAL] = {
		.name = "memwatch_collector_errors_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Failed sample or collect calls.",
		.n_labels = 1, .labels = { "collector" },
		.owner = "daemon", .source = "the daemon",
	},
	[MW_WINDOW_SECONDS] = {
		.name = "memwatch_window_seconds", .type = METRIC_GAUGE, .unit = METRIC_UNIT_SECONDS,
		.help = "Configured window length.",
		.owner = "daemon", .source = "the daemon",
	},
	[MW_SAMPLE_INTERVAL_SECONDS] = {
		.name = "memwatch_sample_interval_seconds", .type = METRIC_GAUGE, .unit = METRIC_UNIT_SECONDS,
		.help = "Configured sample interval of the fast samplers.",
		.owner = "daemon", .source = "the daemon",
	},
	[MW_WINDOW_END_TIMESTAMP_SECONDS] = {
		.name = "memwatch_window_end_timestamp_seconds", .type = METRIC_GAUGE, .unit = METRIC_UNIT_SECONDS,
		.help = "Wall-clock time at which this window ended.",
		.owner = "daemon", .source = "the daemon",
	},
	[MW_START_TIME_SECONDS] = {
		.name = "memwatch_start_time_seconds", .type = METRIC_GAUGE, .unit = METRIC_UNIT_SECONDS,
		.help = "Wall-clock time at which the daemon started.",
		.owner = "daemon", .source = "the daemon",
	},
	[MW_SERIES_DROPPED_TOTAL] = {
		.name = "memwatch_series_dropped_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Series of the collector left out because a window reached daemon.max_series (the daemon's own "
		 "series have a budget of their own and are never cut).",
		.n_labels = 1, .labels = { "collector" },
		.owner = "daemon", .source = "the daemon",
	},
	[MW_CONFIG_RELOADS_TOTAL] = {
		.name = "memwatch_config_reloads_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Configuration reloads, by result.",
		.n_labels = 1, .labels = { "result" },
		.owner = "daemon", .source = "the daemon",
	},
	[MW_QUIET_WINDOWS_TOTAL] = {
		.name = "memwatch_quiet_windows_total", .type = METRIC_COUNTER, .unit = METRIC_UNIT_NONE,
		.help = "Window ends passed over because memory stood still: the in-kernel sampler saw free, file and dirty pages "
		 "and available memory stay within a thousandth of memory of the window's first figures, and no pressure event "
		 "came; the window went on, up to daemon.quiet_read_interval.",
		.owner = "daemon", .source = "the daemon",
	},
	[MW_WINDOW_LENGTH_SECONDS] = {
		.name = "memwatch_window_length_seconds", .type = METRIC_GAUGE, .unit = METRIC_UNIT_SECONDS,
		.help = "Length of this window: daemon.window, or up to daemon.quiet_read_interval when memory stood still.",
		.owner = "daemon", .source = "the daemon",
	},
};

const char *metric_unit_name(enum metric_unit u)
{
	switch (u) {
	case METRIC_UNIT_BYTES:
		return "bytes";
	case METRIC_UNIT_SECONDS:
		return "seconds";
	case METRIC_UNIT_RATIO:
		return "ratio";
	case METRIC_UNIT_BYTES_PER_SECOND:
		return "bytes_per_second";
	case METRIC_UNIT_NONE:
	default:
		return "none";
	}
}

const char *metric_unit_suffix(enum metric_unit u)
{
	switch (u) {
	case METRIC_UNIT_BYTES:
		return "_bytes";
	case METRIC_UNIT_SECONDS:
		return "_seconds";
	case METRIC_UNIT_RATIO:
		return "_ratio";
	case METRIC_UNIT_BYTES_PER_SECOND:
		return "_bytes_per_second";
	case METRIC_UNIT_NONE:
	default:
		return "";
	}
}

const struct metric_desc *metric_find(const char *name)
{
	size_t i;

	for (i = 0; name && i < ARRAY_SIZE(metric_catalogue); i++)
		if (strcmp(metric_catalogue[i].name, name) == 0)
			return &metric_catalogue[i];
	return NULL;
}
