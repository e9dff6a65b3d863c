// SPDX-License-Identifier: GPL-2.0
/* A fixed, deterministic mixed workload for bench/hotpath.sh, in place of
 * stress-ng's time-boxed bogo-ops (whose rate varied 15x from run to run here).
 * Each round does the same work:
 *
 *   file    write a 4 MiB file in the page cache in 64 KiB writes, read it
 *           back, truncate it to 0 (its pages are freed before writeback)
 *   anon    mmap 1 MiB of anonymous memory, write every 4 KiB page, munmap
 *   fork    fork a child that exits at once, and wait for it
 *   malloc  1,000 malloc/free pairs of 16 B..4 KiB (a fixed pseudo-random
 *           sequence), the user-space share of a real program
 *
 *   mixed_work [--dir DIR] [--serve] [ROUNDS]   (defaults: the current directory, 200)
 *
 * A tenth of the rounds (at least one) run first, untimed. Prints one line of
 * key=value pairs: rounds, wall and CPU nanoseconds per round (CPU: user +
 * system of this process and of its reaped children), and the minor faults of
 * the timed part. With --serve, after the warm-up it times ROUNDS rounds and
 * prints that line again for every line read from stdin, until end of file:
 * both sides of a comparison then run in the same process, with the same
 * address-space layout and file, which differ from one process to the next
 * (and with them, at times, the speed by a few percent here). The file is
 * removed at exit. Nothing here is sized to put the machine under memory
 * pressure: about 6 MiB are in use at any time. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FILE_BYTES (4u << 20)
#define IO_CHUNK (64u << 10)
#define ANON_BYTES (1u << 20)
#define MALLOCS 1000

static char io_buf[IO_CHUNK];

static double now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double children_cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_CHILDREN, &ru);
	return ((double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec) * 1e9 +
	       ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e3;
}

static long minor_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static int file_work(int fd)
{
	size_t off;

	for (off = 0; off < FILE_BYTES; off += IO_CHUNK)
		if (pwrite(fd, io_buf, IO_CHUNK, (off_t)off) != (ssize_t)IO_CHUNK)
			return -1;
	for (off = 0; off < FILE_BYTES; off += IO_CHUNK)
		if (pread(fd, io_buf, IO_CHUNK, (off_t)off) != (ssize_t)IO_CHUNK)
			return -1;
	return ftruncate(fd, 0);
}

static int anon_work(size_t page)
{
	volatile char *p = mmap(NULL, ANON_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t off;

	if (p == MAP_FAILED)
		return -1;
	madvise((void *)p, ANON_BYTES, MADV_NOHUGEPAGE);
	for (off = 0; off < ANON_BYTES; off += page)
		p[off] = 1;
	return munmap((void *)p, ANON_BYTES);
}

static int fork_work(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(0);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

static void malloc_work(unsigned *seed)
{
	static void *slot[64];
	int i;

	for (i = 0; i < MALLOCS; i++) {
		unsigned s = *seed = *seed * 1103515245u + 12345u;
		unsigned k = (s >> 8) % 64;

		free(slot[k]);
		slot[k] = malloc(16 + (s >> 16) % 4081);
		if (slot[k])
			((volatile char *)slot[k])[0] = (char)i;
	}
}

static int one_round(int fd, size_t page, unsigned *seed)
{
	if (file_work(fd) < 0) {
		perror("file");
		return -1;
	}
	if (anon_work(page) < 0) {
		perror("anon");
		return -1;
	}
	if (fork_work() < 0) {
		perror("fork");
		return -1;
	}
	malloc_work(seed);
	return 0;
}

/* Times ROUNDS rounds and prints the result line. */
static int timed_rounds(int fd, size_t page, unsigned *seed, long rounds)
{
	double w0, w1, c0, c1, k0, k1;
	long i, f0, f1;

	f0 = minor_faults();
	k0 = children_cpu_ns();
	c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	w0 = now_ns(CLOCK_MONOTONIC);
	for (i = 0; i < rounds; i++)
		if (one_round(fd, page, seed) < 0)
			return -1;
	w1 = now_ns(CLOCK_MONOTONIC);
	c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	k1 = children_cpu_ns();
	f1 = minor_faults();

	printf("rounds=%ld wall_s=%.4f wall_ns_per_round=%.0f cpu_ns_per_round=%.0f children_cpu_ns_per_round=%.0f "
	       "minor_faults=%ld\n",
	       rounds, (w1 - w0) / 1e9, (w1 - w0) / (double)rounds, (c1 - c0 + k1 - k0) / (double)rounds,
	       (k1 - k0) / (double)rounds, f1 - f0);
	fflush(stdout);
	return 0;
}

int main(int argc, char *argv[])
{
	const char *dir = ".";
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	long rounds = 200, warmup, i;
	unsigned seed = 1;
	char path[4096], line[64];
	int fd, argi = 1, rc = 1, serve = 0;

	if (argc > argi + 1 && strcmp(argv[argi], "--dir") == 0) {
		dir = argv[argi + 1];
		argi += 2;
	}
	if (argc > argi && strcmp(argv[argi], "--serve") == 0) {
		serve = 1;
		argi++;
	}
	if (argc > argi)
		rounds = atol(argv[argi]);
	if (rounds <= 0) {
		fprintf(stderr, "usage: %s [--dir DIR] [--serve] [ROUNDS]\n", argv[0]);
		return 2;
	}
	snprintf(path, sizeof(path), "%s/mixed_work.%ld", dir, (long)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	memset(io_buf, 1, sizeof(io_buf));
	warmup = rounds / 10 ? rounds / 10 : 1;
	for (i = 0; i < warmup; i++)
		if (one_round(fd, page, &seed) < 0)
			goto out;

	if (!serve) {
		rc = timed_rounds(fd, page, &seed, rounds) < 0;
		goto out;
	}
	while (fgets(line, sizeof(line), stdin))
		if (timed_rounds(fd, page, &seed, rounds) < 0)
			goto out;
	rc = 0;
out:
	close(fd);
	unlink(path);
	return rc;
}
