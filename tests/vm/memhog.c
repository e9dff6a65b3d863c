// SPDX-License-Identifier: GPL-2.0
/* Guest workload for the VM tests: touches anonymous memory to create global
 * memory pressure inside a small qemu guest. Never run it on the host.
 *
 *   memhog [-H] [-R] [-f] [-n COMM] [-F FRAG_MIB] MIB
 *
 *   -H  madvise(MADV_HUGEPAGE) the mapping: each fault then wants an order-9
 *       page and, with THP defrag "madvise", compacts and reclaims directly,
 *       which is the dependable way to make a task enter direct reclaim.
 *   -R  first raise vm.min_free_kbytes to 16 MiB above MemFree, from this
 *       process: its own next allocations are then below the min watermark
 *       and reclaim directly, whatever kswapd does (THP faults no longer
 *       reclaim on 6.18+). The caller restores the sysctl.
 *   -f  run the hog in a child and report how it ended, one line:
 *       "memhog: child PID signal N" or "memhog: child PID exit N".
 *       The parent stays tiny, so the OOM killer picks the child.
 *   -n  set the comm (PR_SET_NAME, at most 15 bytes) of the process that
 *       touches the memory, the child with -f, so that an OOM victim or a
 *       stalled task can be told apart from the parent and other hogs.
 *   -F  first fragment FRAG_MIB of memory: touch it in small pages, then give
 *       back every other page, so that what is free lies in single-page holes
 *       between pages still held (until exit). Huge pages (-H) then have to
 *       be made by direct compaction.
 *
 * Exit status: 0 when the memory was touched (or, with -f, the child's own
 * status: 128 + signal when it was killed), 2 on bad usage, 1 on error. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024UL * 1024UL)
#define HUGE_SIZE (2UL * MIB)

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Nothing printed between the raise and the first touch: a console write
 * allocates and wakes kswapd, which (EEVDF, 6.6+) runs first and lifts free
 * memory back above the watermarks before the hog allocates. */
static int raise_reserve(unsigned long *before_kib, unsigned long *raised_kib, unsigned long *free_kib_out)
{
	unsigned long free_kib = 0, before = 0, want;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemFree: %lu kB", &free_kib) == 1)
			break;
	if (f)
		fclose(f);
	f = fopen("/proc/sys/vm/min_free_kbytes", "r+e");
	if (!f || !free_kib || fscanf(f, "%lu", &before) != 1) {
		fprintf(stderr, "memhog: reading MemFree and vm.min_free_kbytes: %s\n", strerror(errno));
		if (f)
			fclose(f);
		return 1;
	}
	want = free_kib + 16 * 1024;
	rewind(f);
	if (fprintf(f, "%lu\n", want) < 0 || fclose(f) != 0) {
		fprintf(stderr, "memhog: writing vm.min_free_kbytes %lu: %s\n", want, strerror(errno));
		return 1;
	}
	*before_kib = before;
	*raised_kib = want;
	*free_kib_out = free_kib;
	return 0;
}

/* Maps and touches the memory in chunks: the default overcommit heuristic
 * refuses one mapping larger than RAM, and a leaking program grows by pieces
 * anyway. Nothing is unmapped before the end. */
#define CHUNK_MIB 32UL

static int hog(unsigned long mib, bool huge, bool reserve, const char *comm)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), chunk_len, map_len;
	double start = now_seconds();
	unsigned long done, min_before = 0, min_raised = 0, free_kib = 0;

	if (comm && prctl(PR_SET_NAME, comm, 0, 0, 0) < 0) {
		fprintf(stderr, "memhog: prctl(PR_SET_NAME, %s): %s\n", comm, strerror(errno));
		return 1;
	}
	printf("memhog: pid %ld%s%s touching %lu MiB%s\n", (long)getpid(), comm ? " comm " : "",
	       comm ? comm : "", mib, huge ? " (MADV_HUGEPAGE)" : "");
	fflush(stdout);
	if (reserve && raise_reserve(&min_before, &min_raised, &free_kib) != 0)
		return 1;
	for (done = 0; done < mib; done += chunk_len / MIB) {
		unsigned char *map, *p;

		chunk_len = (mib - done < CHUNK_MIB ? mib - done : CHUNK_MIB) * MIB;
		/* Room to align the start to a huge page boundary. */
		map_len = chunk_len + HUGE_SIZE;
		map = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (map == MAP_FAILED) {
			fprintf(stderr, "memhog: mmap after %lu MiB: %s\n", done, strerror(errno));
			return 1;
		}
		p = (unsigned char *)(((uintptr_t)map + HUGE_SIZE - 1) & ~(uintptr_t)(HUGE_SIZE - 1));
		if (huge && madvise(p, chunk_len, MADV_HUGEPAGE) < 0) {
			fprintf(stderr, "memhog: madvise(MADV_HUGEPAGE): %s\n", strerror(errno));
			huge = false; /* small pages from here on; say so once */
		}
		for (size_t off = 0; off < chunk_len; off += page)
			p[off] = (unsigned char)(off >> 12 | 1);
	}
	printf("memhog: pid %ld touched %lu MiB in %.2f s\n", (long)getpid(), mib,
	       now_seconds() - start);
	if (reserve)
		printf("memhog: vm.min_free_kbytes %lu -> %lu before touching (MemFree %lu kB)\n", min_before,
		       min_raised, free_kib);
	fflush(stdout);
	return 0;
}

static int fragment(unsigned long mib)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = mib * MIB;
	double start = now_seconds();
	unsigned char *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "memhog: mmap %lu MiB to fragment: %s\n", mib, strerror(errno));
		return 1;
	}
	if (madvise(p, len, MADV_NOHUGEPAGE) < 0) {
		fprintf(stderr, "memhog: madvise(MADV_NOHUGEPAGE): %s\n", strerror(errno));
		return 1;
	}
	for (size_t off = 0; off < len; off += page)
		p[off] = 1;
	for (size_t off = page; off < len; off += 2 * page)
		if (madvise(p + off, page, MADV_DONTNEED) < 0) {
			fprintf(stderr, "memhog: madvise(MADV_DONTNEED): %s\n", strerror(errno));
			return 1;
		}
	printf("memhog: pid %ld fragmented %lu MiB (every other page given back) in %.2f s\n", (long)getpid(), mib,
	       now_seconds() - start);
	fflush(stdout);
	return 0;
}

static int hog_in_child(unsigned long mib, bool huge, const char *comm)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "memhog: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0)
		_exit(hog(mib, huge, false, comm));
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "memhog: waitpid: %s\n", strerror(errno));
			return 1;
		}
	if (WIFSIGNALED(status)) {
		printf("memhog: child %ld signal %d\n", (long)pid, WTERMSIG(status));
		return 128 + WTERMSIG(status);
	}
	printf("memhog: child %ld exit %d\n", (long)pid, WEXITSTATUS(status));
	return WEXITSTATUS(status);
}

int main(int argc, char *argv[])
{
	bool huge = false, in_child = false, reserve = false;
	const char *comm = NULL;
	unsigned long mib, frag = 0;
	char *end;
	int c;

	while ((c = getopt(argc, argv, "HRfF:n:")) >= 0) {
		switch (c) {
		case 'H':
			huge = true;
			break;
		case 'R':
			reserve = true;
			break;
		case 'f':
			in_child = true;
			break;
		case 'F':
			errno = 0;
			frag = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || frag == 0 || frag > 1024UL * 1024UL) {
				fprintf(stderr, "memhog: -F '%s' is not a size in MiB (1 to 1048576)\n", optarg);
				return 2;
			}
			break;
		case 'n':
			if (!*optarg || strlen(optarg) > 15) {
				fprintf(stderr, "memhog: -n '%s': a comm has 1 to 15 bytes\n", optarg);
				return 2;
			}
			comm = optarg;
			break;
		default:
			fprintf(stderr, "usage: memhog [-H] [-R] [-f] [-n COMM] [-F FRAG_MIB] MIB\n");
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: memhog [-H] [-R] [-f] [-n COMM] [-F FRAG_MIB] MIB\n");
		return 2;
	}
	errno = 0;
	mib = strtoul(argv[optind], &end, 10);
	if (errno || end == argv[optind] || *end || mib == 0 || mib > 1024UL * 1024UL) {
		fprintf(stderr, "memhog: '%s' is not a size in MiB (1 to 1048576)\n", argv[optind]);
		return 2;
	}
	if (reserve && in_child)
		return 2;
	if (frag && fragment(frag) != 0)
		return 1;
	return in_child ? hog_in_child(mib, huge, comm) : hog(mib, huge, reserve, comm);
}
