// SPDX-License-Identifier: GPL-2.0
/* The floor under memwatchd's idle CPU, for bench/idle.sh: what sampling
 * available memory every 100 ms costs by itself on this machine.
 *
 *   sampling_floor SECONDS [--no-read]
 *
 * Sleeps in ppoll() until each next 100 ms tick (as the daemon's main loop
 * does) and reads /proc/meminfo once per tick (with --no-read: only wakes
 * up), for SECONDS; then prints its own CPU time (user + system, this
 * process) as % of one core. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TICK_NSEC 100000000LL

static long long ns_of(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000000000LL + t->tv_nsec;
}

int main(int argc, char **argv)
{
	int fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	bool read_meminfo = !(argc > 2 && strcmp(argv[2], "--no-read") == 0);
	long long ticks, next;
	struct timespec now, c0, c1;
	char buf[8192];

	if (argc < 2 || fd < 0 || (ticks = atoll(argv[1]) * 10) <= 0) {
		fprintf(stderr, "usage: sampling_floor SECONDS [--no-read]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	next = ns_of(&now);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	for (long long i = 0; i < ticks; i++) {
		long long left;
		struct timespec d;

		next += TICK_NSEC;
		clock_gettime(CLOCK_MONOTONIC, &now);
		left = next - ns_of(&now);
		if (left < 0)
			left = 0;
		d = (struct timespec){ .tv_sec = left / 1000000000LL, .tv_nsec = left % 1000000000LL };
		ppoll(NULL, 0, &d, NULL);
		if (read_meminfo && pread(fd, buf, sizeof(buf), 0) < 0)
			return 1;
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	printf("%.4f\n", (double)(ns_of(&c1) - ns_of(&c0)) / (double)(ticks * TICK_NSEC) * 100);
	return 0;
}
