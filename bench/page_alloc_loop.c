// SPDX-License-Identifier: GPL-2.0
/* A page-allocation-bound loop for bench/hotpath.sh: map 2 MiB of anonymous
 * memory, write one byte to every 4 KiB page (one page fault and one order-0
 * page allocation each), unmap, and repeat a fixed number of times.
 *
 *   page_alloc_loop [ITERATIONS [MIB]]     (defaults: 2000 iterations of 2 MiB)
 *   page_alloc_loop --pipe [ITERATIONS]    (default 100000)
 *
 * Huge pages are refused with MADV_NOHUGEPAGE so that every page is one
 * kmem:mm_page_alloc event of order 0, whatever the THP setting. A tenth of
 * the iterations (at least one) run first, untimed, so the pages come from
 * memory the guest has already touched once.
 *
 * --pipe allocates pages without page faults: each iteration writes 64 KiB
 * into a pipe (the kernel allocates a page per 4 KiB buffer) and reads it
 * back (the pages are freed). Page faults are expensive in some VMs (shadow
 * page tables); this path shows the cost per allocation where the rest of the
 * work is cheap.
 *
 * Prints one line of key=value pairs: wall and CPU (user+system of this
 * process) nanoseconds per page, iterations per second, and the minor faults
 * of the timed part (a sanity check: it should equal the pages touched). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static long minor_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static int one_round(size_t bytes, size_t page)
{
	volatile char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t off;

	if (p == MAP_FAILED) {
		perror("mmap");
		return -1;
	}
	madvise((void *)p, bytes, MADV_NOHUGEPAGE);
	for (off = 0; off < bytes; off += page)
		p[off] = 1;
	if (munmap((void *)p, bytes) < 0) {
		perror("munmap");
		return -1;
	}
	return 0;
}

#define PIPE_CHUNK (64 * 1024)

static int one_pipe_round(const int fd[2], char *buf)
{
	if (write(fd[1], buf, PIPE_CHUNK) != PIPE_CHUNK || read(fd[0], buf, PIPE_CHUNK) != PIPE_CHUNK) {
		perror("pipe");
		return -1;
	}
	return 0;
}

static int pipe_main(int argc, char *argv[])
{
	static char buf[PIPE_CHUNK];
	long iterations = argc > 2 ? atol(argv[2]) : 100000, warmup, f0, f1, i;
	size_t pages;
	double w0, w1, c0, c1;
	int fd[2];

	if (iterations <= 0) {
		fprintf(stderr, "usage: %s --pipe [ITERATIONS]\n", argv[0]);
		return 2;
	}
	if (pipe(fd) < 0 || fcntl(fd[1], F_SETPIPE_SZ, 4 * PIPE_CHUNK) < 0) {
		perror("pipe");
		return 1;
	}
	memset(buf, 1, sizeof(buf));
	pages = PIPE_CHUNK / (size_t)sysconf(_SC_PAGESIZE);
	warmup = iterations / 10 ? iterations / 10 : 1;
	for (i = 0; i < warmup; i++)
		if (one_pipe_round(fd, buf) < 0)
			return 1;
	f0 = minor_faults();
	c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	w0 = now_ns(CLOCK_MONOTONIC);
	for (i = 0; i < iterations; i++)
		if (one_pipe_round(fd, buf) < 0)
			return 1;
	w1 = now_ns(CLOCK_MONOTONIC);
	c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	f1 = minor_faults();
	printf("iterations=%ld pages=%zu wall_s=%.4f wall_ns_per_page=%.2f cpu_ns_per_page=%.2f "
	       "iter_per_s=%.1f minor_faults=%ld\n",
	       iterations, pages * (size_t)iterations, (w1 - w0) / 1e9,
	       (w1 - w0) / ((double)pages * (double)iterations),
	       (c1 - c0) / ((double)pages * (double)iterations), (double)iterations * 1e9 / (w1 - w0),
	       f1 - f0);
	return 0;
}

int main(int argc, char *argv[])
{
	long iterations = argc > 1 ? atol(argv[1]) : 2000;
	long mib = argc > 2 ? atol(argv[2]) : 2;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes, pages;
	double w0, w1, c0, c1;
	long warmup, f0, f1, i;

	if (argc > 1 && strcmp(argv[1], "--pipe") == 0)
		return pipe_main(argc, argv);
	if (iterations <= 0 || mib <= 0) {
		fprintf(stderr, "usage: %s [ITERATIONS [MIB]]\n", argv[0]);
		return 2;
	}
	bytes = (size_t)mib << 20;
	pages = bytes / page;
	warmup = iterations / 10 ? iterations / 10 : 1;
	for (i = 0; i < warmup; i++)
		if (one_round(bytes, page) < 0)
			return 1;

	f0 = minor_faults();
	c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	w0 = now_ns(CLOCK_MONOTONIC);
	for (i = 0; i < iterations; i++)
		if (one_round(bytes, page) < 0)
			return 1;
	w1 = now_ns(CLOCK_MONOTONIC);
	c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	f1 = minor_faults();

	printf("iterations=%ld pages=%zu wall_s=%.4f wall_ns_per_page=%.2f cpu_ns_per_page=%.2f "
	       "iter_per_s=%.1f minor_faults=%ld\n",
	       iterations, pages * (size_t)iterations, (w1 - w0) / 1e9,
	       (w1 - w0) / ((double)pages * (double)iterations),
	       (c1 - c0) / ((double)pages * (double)iterations), (double)iterations * 1e9 / (w1 - w0),
	       f1 - f0);
	return 0;
}
