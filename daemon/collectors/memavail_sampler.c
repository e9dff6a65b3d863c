// SPDX-License-Identifier: GPL-2.0
/* The in-kernel sampler of available memory (memavail_sampler.h). */
#include <linux/perf_event.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "bpf_attach.h"
#include "clock.h"
#include "collector.h"
#include "fileio.h"
#include "memavail.h"
#include "memavail_sampler.h"
#include "memavail_sampler.skel.h"
#include "meminfo.h"
#include "zoneinfo.h"

#define VALIDATION_TRIES 3

struct memavail_sampler {
	struct memavail_sampler_bpf *skel;
	uint64_t read_head; /* samples_head as of the last drain */
	long page_size;
	bool stirs; /* its stir map is the shared one */
	/* The cpu-clock event that runs sample_on_clock (owned by the link);
	 * -1 where the bpf_timer runs the samples instead. */
	struct bpf_link *clock_link;
	int clock_fd;
	int clock_cpu;
	char clock_refused[120]; /* why the bpf_timer runs them */
};

static int run_syscall_prog(const struct bpf_program *prog)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	return bpf_prog_test_run_opts(bpf_program__fd(prog), &opts) < 0 ? -errno : 0;
}

int memavail_sampler_compute_now(struct memavail_sampler *s, double *bytes)
{
	int r = run_syscall_prog(s->skel->progs.compute_now);

	if (r < 0)
		return r;
	if (s->skel->bss->now_error)
		return -ENODATA;
	*bytes = (double)s->skel->bss->now_pages * (double)s->page_size;
	return 0;
}

/* The computation against MemAvailable read between two computations: the
 * closest of a few tries, or the first within tolerance. */
static int agreement(struct memavail_sampler *s, double tolerance, struct procfile *meminfo, double *error)
{
	double before = 0, after = 0, available = 0;
	int r = 0;

	*error = INFINITY;
	for (int i = 0; i < VALIDATION_TRIES && *error > tolerance; i++) {
		r = memavail_sampler_compute_now(s, &before);
		if (r == 0)
			r = meminfo_read_available(meminfo, &available);
		if (r == 0)
			r = memavail_sampler_compute_now(s, &after);
		if (r < 0)
			return r;
		*error = fmin(*error, available > 0 ? fabs((before + after) / 2 - available) / available : INFINITY);
	}
	return 0;
}

/* MemTotal in pages where it is more than the zones manage (a kernel that
 * initialises memory lazily: MemTotal and MemFree count pages no zone
 * manages yet); 0 where the two are equal (stock kernels), which saves the
 * sampler reading each zone's managed pages. */
static uint64_t memtotal_beyond_zones(struct memavail_sampler *s, struct procfile *meminfo, uint64_t *unmanaged)
{
	struct zoneinfo z;
	struct meminfo m;
	char *text = NULL;
	size_t len = 0;
	uint64_t total;
	int r;

	if (meminfo_read(meminfo, &m) < 0 || read_full_file("/proc/zoneinfo", 4u << 20, &text, &len) < 0)
		return 0;
	r = zoneinfo_parse(text, len, &z);
	free(text);
	total = m.total / (uint64_t)s->page_size;
	if (r < 0 || total <= z.managed_pages)
		return 0;
	*unmanaged = total - z.managed_pages;
	return total;
}

/* With the memory no zone manages yet counted free, where there is any;
 * without, if that is what agrees. */
static int validate(struct memavail_sampler *s, double tolerance, struct procfile *meminfo, char *why, size_t whylen)
{
	double error = INFINITY, counted;
	uint64_t unmanaged = 0;
	int r;

	s->skel->bss->memtotal_pages = memtotal_beyond_zones(s, meminfo, &unmanaged);
	r = agreement(s, tolerance, meminfo, &error);
	if (r == 0 && error > tolerance && s->skel->bss->memtotal_pages) {
		counted = error;
		s->skel->bss->memtotal_pages = 0;
		r = agreement(s, tolerance, meminfo, &error);
		if (r == 0 && error > tolerance)
			error = fmin(error, counted);
	}
	if (r == 0 && error <= tolerance) {
		if (s->skel->bss->memtotal_pages)
			log_info("Collector meminfo: %.1f MiB of MemTotal no zone manages yet (a kernel that initialises "
				 "memory lazily): the in-kernel sampler counts it free",
				 (double)unmanaged * (double)s->page_size / 1048576);
		return 0;
	}
	if (r == -ENODATA)
		snprintf(why, whylen, "the computation from the kernel's counters failed (error %lld)",
			 (long long)s->skel->bss->now_error);
	else if (r < 0)
		snprintf(why, whylen, "could not run the computation: %s", strerror(-r));
	else
		snprintf(why, whylen, "the computation from the kernel's counters is %.2f%% from MemAvailable (tolerance %.2f%%)",
			 error * 100, tolerance * 100);
	return -EOPNOTSUPP;
}

/* Samples every interval from a cpu-clock perf event of one CPU: its hrtimer
 * restarts itself in hard irq, where a bpf_timer's callback runs in softirq
 * and re-arms it (about 3 us of the 7 a sample cost on this project's CI
 * host). The lowest CPU the daemon may run on: CPUAffinity= keeps it on
 * housekeeping CPUs, away from isolated ones. */
static int attach_clock(struct memavail_sampler *s, uint64_t interval_msec)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = interval_msec * NSEC_PER_MSEC,
		.disabled = 1, /* libbpf enables it once the program is attached */
	};
	cpu_set_t cpus;
	int r = -ENODEV;

	if (sched_getaffinity(0, sizeof(cpus), &cpus) < 0)
		return -errno;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		struct bpf_link *link;
		int fd;

		if (!CPU_ISSET(cpu, &cpus))
			continue;
		fd = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			r = -errno;
			if (r == -ENODEV) /* offline since the affinity was read */
				continue;
			return r;
		}
		link = bpf_program__attach_perf_event(s->skel->progs.sample_on_clock, fd);
		if (!link) {
			r = -errno;
			close(fd);
			return r;
		}
		s->clock_link = link;
		s->clock_fd = fd;
		s->clock_cpu = cpu;
		return 0;
	}
	return r;
}

static int arm_timer(struct memavail_sampler *s)
{
	int r = run_syscall_prog(s->skel->progs.arm_sampler);

	if (r == 0 && s->skel->bss->armed != 1)
		r = s->skel->bss->armed < 0 ? (int)s->skel->bss->armed : -EIO;
	return r;
}

int memavail_sampler_start(struct memavail_sampler **ret, struct bpf_shared_maps *shared, uint64_t interval_msec,
			   double tolerance, struct procfile *meminfo, char *why, size_t whylen)
{
	struct memavail_sampler *s;
	int r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->clock_fd = -1;
	s->page_size = sysconf(_SC_PAGESIZE);
	s->skel = memavail_sampler_bpf__open();
	if (!s->skel) {
		r = -errno;
		snprintf(why, whylen, "cannot open its BPF object: %s", strerror(-r));
		goto fail;
	}
	bpf_program__set_autoload(s->skel->progs.arm_sampler, true);
	bpf_program__set_autoload(s->skel->progs.compute_now, true);
	r = bpf_shared_map_reuse(shared, s->skel->maps.memavail);
	s->stirs = bpf_shared_map_join(shared, s->skel->maps.stir);
	if (r == 0) {
		log_set_libbpf_quiet(true);
		r = memavail_sampler_bpf__load(s->skel);
		log_set_libbpf_quiet(false);
	}
	if (r < 0) {
		/* 5.10: no syscall programs; before 5.15 no bpf_timer. */
		snprintf(why, whylen, "the kernel does not load its programs (syscall programs and bpf_timer, 5.15): %s",
			 strerror(-r));
		r = -EOPNOTSUPP;
		goto fail;
	}
	/* Also finds the node, in the daemon's context, for the samples to come. */
	r = validate(s, tolerance, meminfo, why, whylen);
	if (r < 0)
		goto fail;
	s->skel->bss->interval_ns = interval_msec * NSEC_PER_MSEC;
	log_set_libbpf_quiet(true);
	r = attach_clock(s, interval_msec);
	log_set_libbpf_quiet(false);
	if (r < 0) {
		char *paranoid = NULL;

		/* Debian's 3 refuses perf events to all but CAP_SYS_ADMIN. */
		if (r == -EACCES || r == -EPERM)
			(void)read_full_file("/proc/sys/kernel/perf_event_paranoid", 32, &paranoid, NULL);
		snprintf(s->clock_refused, sizeof(s->clock_refused), "a cpu-clock perf event: %s%s%.*s%s", strerror(-r),
			 paranoid ? " (kernel.perf_event_paranoid = " : "", paranoid ? (int)strcspn(paranoid, "\n") : 0,
			 paranoid ? paranoid : "", paranoid ? ")" : "");
		free(paranoid);
		r = arm_timer(s);
	}
	if (r < 0) {
		snprintf(why, whylen, "could not arm its timer: %s (nor %s)", strerror(-r), s->clock_refused);
		r = -EOPNOTSUPP;
		goto fail;
	}
	*ret = s;
	return 0;
fail:
	memavail_sampler_free(s);
	return r;
}

int memavail_sampler_move_clock(struct memavail_sampler *s, uint64_t interval_msec, int *from_cpu, int *to_cpu)
{
	int r;

	if (!s->clock_link)
		return -EOPNOTSUPP;
	*from_cpu = s->clock_cpu;
	bpf_link__destroy(s->clock_link);
	s->clock_link = NULL;
	s->clock_fd = -1;
	log_set_libbpf_quiet(true);
	r = attach_clock(s, interval_msec);
	log_set_libbpf_quiet(false);
	*to_cpu = s->clock_cpu;
	return r;
}

const char *memavail_sampler_method(const struct memavail_sampler *s, const char **refused, int *cpu)
{
	*refused = s->clock_refused[0] ? s->clock_refused : NULL;
	*cpu = s->clock_link ? s->clock_cpu : -1;
	return s->clock_link ? "bpf-cpu-clock" : "bpf-timer";
}

void memavail_sampler_free(struct memavail_sampler *s)
{
	if (!s)
		return;
	/* The perf event goes with its link; the timer with its map, when the
	 * object is destroyed. */
	bpf_link__destroy(s->clock_link);
	memavail_sampler_bpf__destroy(s->skel);
	free(s);
}

void memavail_sampler_note_memtotal(struct memavail_sampler *s, uint64_t bytes)
{
	if (s->skel->bss->memtotal_pages && bytes)
		s->skel->bss->memtotal_pages = bytes / (uint64_t)s->page_size;
}

void memavail_sampler_set_interval(struct memavail_sampler *s, uint64_t interval_msec)
{
	uint64_t period = interval_msec * NSEC_PER_MSEC;

	s->skel->bss->interval_ns = period;
	if (s->clock_fd >= 0 && ioctl(s->clock_fd, PERF_EVENT_IOC_PERIOD, &period) < 0)
		log_warning("Collector meminfo: cannot set the sampler's cpu-clock period to %" PRIu64 " ms: %m",
			    interval_msec);
}

size_t memavail_sampler_drain(struct memavail_sampler *s, memavail_sample_fn fn, void *userdata)
{
	struct memavail_sampler_bpf__bss *bss = s->skel->bss;
	uint64_t head = __atomic_load_n(&bss->samples_head, __ATOMIC_ACQUIRE), seq, after;
	size_t n = 0;

	if (head - s->read_head > MEMAVAIL_SAMPLES)
		s->read_head = head - MEMAVAIL_SAMPLES;
	for (seq = s->read_head; seq < head; seq++) {
		struct memavail_sample sample = bss->samples[seq & (MEMAVAIL_SAMPLES - 1)];

		/* Overwritten while we read it: the timer lapped the reader. The
		 * fence keeps the slot's loads before the head's. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		after = __atomic_load_n(&bss->samples_head, __ATOMIC_RELAXED);
		if (after - seq > MEMAVAIL_SAMPLES - 1)
			continue;
		fn(userdata, sample.ts_ns / NSEC_PER_USEC, (double)sample.pages * (double)s->page_size);
		n++;
	}
	s->read_head = head;
	return n;
}

void memavail_sampler_mark(struct memavail_sampler *s, uint64_t free_pages, uint64_t file_pages, uint64_t dirty_pages)
{
	struct memavail_sampler_bpf__bss *bss = s->skel->bss;

	/* A sample racing these stores can only overstate the movement. */
	__atomic_store_n(&bss->mark_free_pages, free_pages, __ATOMIC_RELAXED);
	__atomic_store_n(&bss->mark_file_pages, file_pages, __ATOMIC_RELAXED);
	__atomic_store_n(&bss->mark_dirty_pages, dirty_pages, __ATOMIC_RELAXED);
	__atomic_store_n(&bss->base_taken, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&bss->moved_pages, 0, __ATOMIC_RELEASE);
}

bool memavail_sampler_stir_above(struct memavail_sampler *s, uint64_t pages)
{
	__atomic_store_n(&s->skel->bss->stir_above_pages, pages, __ATOMIC_RELEASE);
	return s->stirs;
}

uint64_t memavail_sampler_moved_pages(const struct memavail_sampler *s)
{
	return __atomic_load_n(&s->skel->bss->moved_pages, __ATOMIC_ACQUIRE);
}

uint64_t memavail_sampler_samples_taken(const struct memavail_sampler *s)
{
	return __atomic_load_n(&s->skel->bss->samples_head, __ATOMIC_ACQUIRE);
}

uint64_t memavail_sampler_callback_ns(const struct memavail_sampler *s)
{
	return s->skel->bss->callback_ns;
}

int memavail_sampler_last_error(const struct memavail_sampler *s)
{
	return (int)s->skel->bss->last_error;
}
