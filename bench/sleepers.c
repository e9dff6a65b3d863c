// SPDX-License-Identifier: GPL-2.0
/* Many sleeping processes for bench/scale.sh.
 *
 *   sleepers N [DIRS_FILE PER_DIR]
 *
 * Forks N children that sleep until they are killed. With DIRS_FILE (one
 * cgroup directory a line), child i first moves itself into the cgroup on
 * line i / PER_DIR + 1 (children past the last line stay where they are).
 * Prints "ready N" on stdout once every child is asleep (in its cgroup).
 *
 * On SIGTERM or SIGINT the parent kills each child by its PID and reaps it,
 * then exits; every child also dies with the parent (PR_SET_PDEATHSIG), so
 * nothing is left behind even if the parent is killed with SIGKILL. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static int enter_cgroup(const char *dir)
{
	char path[4096];
	FILE *f;
	int r;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	r = fprintf(f, "%d\n", (int)getpid()) < 0 ? -EIO : 0;
	if (fclose(f) != 0 && r == 0)
		r = -errno;
	return r;
}

int main(int argc, char *argv[])
{
	long n = argc > 1 ? atol(argv[1]) : 0, per_dir = argc > 3 ? atol(argv[3]) : 1, i, ndirs = 0, started = 0;
	char **dirs = NULL, line[4096];
	int ready[2], sig, failed = 0;
	pid_t *pids, parent = getpid();
	sigset_t set;

	if (n <= 0 || per_dir <= 0) {
		fprintf(stderr, "usage: %s N [DIRS_FILE PER_DIR]\n", argv[0]);
		return 2;
	}
	if (argc > 2) {
		FILE *f = fopen(argv[2], "r");

		if (!f) {
			perror(argv[2]);
			return 1;
		}
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			if (!line[0])
				continue;
			dirs = realloc(dirs, (size_t)(ndirs + 1) * sizeof(*dirs));
			if (!dirs || !(dirs[ndirs] = strdup(line)))
				return 1;
			ndirs++;
		}
		fclose(f);
	}
	pids = calloc((size_t)n, sizeof(*pids));
	if (!pids || pipe(ready) < 0)
		return 1;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);

	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			fprintf(stderr, "fork %ld: %s\n", i, strerror(errno));
			failed = 1;
			break;
		}
		if (pid == 0) {
			char ok = 1;

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(0);
			sigprocmask(SIG_UNBLOCK, &set, NULL);
			close(ready[0]);
			if (i / per_dir < ndirs && enter_cgroup(dirs[i / per_dir]) < 0)
				ok = 0;
			if (write(ready[1], &ok, 1) != 1)
				_exit(1);
			close(ready[1]);
			for (;;)
				pause();
		}
		pids[started++] = pid;
	}
	close(ready[1]);
	for (i = 0; i < started; i++) {
		char ok;

		if (read(ready[0], &ok, 1) != 1) {
			failed = 1;
			break;
		}
		if (!ok)
			failed = 1;
	}
	if (!failed) {
		printf("ready %ld\n", started);
		fflush(stdout);
		sigwait(&set, &sig);
	} else {
		fprintf(stderr, "sleepers: could not start all %ld children\n", n);
	}
	for (i = 0; i < started; i++)
		kill(pids[i], SIGKILL);
	for (i = 0; i < started; i++)
		while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
			;
	return failed;
}
