// SPDX-License-Identifier: GPL-2.0
/* The pieces test_ui and test_top share; see uitest.h. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "uitest.h"

static char journal_path[400];
static pid_t runner_pid;

/* ---- small utilities ---- */

void require_program(const char *path, const char *package)
{
	ck_assert_msg(access(path, X_OK) == 0,
		      "%s is missing (%s): install the Debian package '%s'; the UI tests need it and do not skip without "
		      "it",
		      path, strerror(errno), package);
}
/* ---- the journal of what a test created ---- */

void journal_add(const char *kind, const char *what)
{
	FILE *f = fopen(journal_path, "ae");

	ck_assert_msg(f != NULL, "cannot open the journal %s: %s", journal_path, strerror(errno));
	fprintf(f, "%s %s\n", kind, what);
	ck_assert_msg(fclose(f) == 0, "cannot write the journal %s", journal_path);
}

void drop_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
	}
	unlink(path);
}

/* rmdir, retried while tasks that were killed are still on their way out. */
int remove_cgroup(const char *path, int timeout_ms)
{
	int64_t deadline = mw_mono_ms() + timeout_ms;

	for (;;) {
		if (rmdir(path) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY || mw_mono_ms() >= deadline)
			return -errno;
		mw_sleep_ms(50);
	}
}

/* `tmux -L name kill-server`, bounded; the server's panes get SIGHUP from it. */
void tmux_kill_server(const char *name)
{
	pid_t pid = fork();
	int64_t deadline = mw_mono_ms() + TMUX_TIMEOUT_MS;
	int st;

	if (pid < 0)
		return;
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execl(TMUX_PATH, TMUX_PATH, "-L", name, "kill-server", (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (mw_mono_ms() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			break;
		}
		mw_sleep_ms(20);
	}
}

/* Undoes everything in the journal that a test did not undo itself: tmux
 * servers first (their panes may be reading), then files, then cgroups. */
void journal_replay(void)
{
	static char buf[16384];
	static const char *const kinds[] = { "tmux ", "file ", "cgroup " };
	size_t k;
	ssize_t n;
	int fd;

	fd = open(journal_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0) {
		unlink(journal_path);
		return;
	}
	buf[n] = '\0';
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		char *line, *next;

		for (line = buf; line && *line; line = next) {
			char *nl = strchr(line, '\n');
			size_t kl = strlen(kinds[k]);

			next = nl ? nl + 1 : NULL;
			if (nl)
				*nl = '\0';
			if (strncmp(line, kinds[k], kl) == 0) {
				const char *what = line + kl;

				if (k == 0)
					tmux_kill_server(what);
				else if (k == 1)
					drop_file(what);
				else if (remove_cgroup(what, 10000) < 0)
					fprintf(stderr, "cleanup: cannot remove cgroup %s: %s\n", what, strerror(errno));
			}
			if (nl)
				*nl = '\n';
		}
	}
	unlink(journal_path);
}

static void replay_after_test(void)
{
	journal_replay();
}

static void on_fatal_signal(int sig)
{
	if (getpid() == runner_pid)
		journal_replay();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* ---- the daemon ---- */

static void teardown_daemons(void)
{
	int killed = mw_cleanup_all();

	ck_assert_msg(killed == 0, "%d daemon(s) ignored SIGTERM and had to be killed", killed);
}

struct mw_daemon *start_daemon_with(const char *config)
{
	char *conf = mw_write_temp_file("memwatchd.conf", config);
	struct mw_daemon *d;

	ck_assert_msg(conf != NULL, "cannot write a temporary config");
	d = mw_start(conf, NULL, false);
	free(conf);
	ck_assert_msg(d != NULL, "memwatchd did not start serving /metrics (log above)");
	return d;
}

/* ---- processes the tests start ---- */

static void touch_forever(size_t len, long pause_ms)
{
	const struct timespec pause = { .tv_nsec = pause_ms * 1000000L };

	for (;;) {
		volatile char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		size_t i;

		if (m == MAP_FAILED)
			_exit(4);
		/* Small pages: one minor fault per 4 KiB touched. */
		madvise((void *)m, len, MADV_NOHUGEPAGE);
		for (i = 0; i < len; i += 4096)
			m[i] = 1;
		munmap((void *)m, len);
		nanosleep(&pause, NULL);
	}
}

/* Reads a sparse file (bigger than the cgroup's limit) round and round: every
 * read fills the page cache, so the cgroup reclaims all the time. */
static void read_forever(const char *path)
{
	const size_t chunk = MiB;
	const struct timespec pause = { .tv_nsec = 2 * 1000000L };
	char *buf = malloc(chunk);
	off_t off = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (!buf || fd < 0)
		_exit(5);
	for (;;) {
		ssize_t n = pread(fd, buf, chunk, off);

		if (n < 0)
			_exit(6);
		off = n == 0 ? 0 : off + n;
		if (off % (16 * MiB) == 0)
			nanosleep(&pause, NULL);
	}
}

/* Forks a worker called name (its comm), in cgroup procs_file if given, and
 * waits until it has its name and cgroup. It dies with the test. */
pid_t spawn_worker(const char *name, enum work work, const char *procs_file, const char *file)
{
	pid_t parent = getpid(), pid;
	struct pollfd pfd;
	char ok = 0, comm_path[64], *comm;
	int p[2];

	ck_assert_msg(pipe2(p, O_CLOEXEC) == 0, "pipe2: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		char self[32];

		close(p[0]);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(126);
		if (prctl(PR_SET_NAME, name) < 0)
			_exit(2);
		snprintf(self, sizeof(self), "%d", (int)getpid());
		if (procs_file && mw_write_text(procs_file, self) < 0)
			_exit(3);
		if (write(p[1], "r", 1) != 1)
			_exit(7);
		close(p[1]);
		if (work == WORK_TOUCH)
			touch_forever(32 * MiB, 20);
		if (work == WORK_TOUCH_SLOW)
			touch_forever(4 * MiB, 100);
		read_forever(file);
		_exit(0);
	}
	close(p[1]);
	pfd = (struct pollfd){ .fd = p[0], .events = POLLIN };
	if (poll(&pfd, 1, 10000) == 1 && read(p[0], &ok, 1) != 1)
		ok = 0;
	close(p[0]);
	if (ok != 'r') {
		int st = 0;

		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		ck_abort_msg("worker '%s' did not start (status 0x%x: 2 = PR_SET_NAME, 3 = joining %s)", name, st,
			     procs_file ? procs_file : "-");
	}
	snprintf(comm_path, sizeof(comm_path), "/proc/%d/comm", (int)pid);
	comm = mw_read_file(comm_path, NULL);
	ck_assert_msg(comm && strncmp(comm, name, strlen(name)) == 0 && comm[strlen(name)] == '\n',
		      "worker %d is called '%s', not '%s'", (int)pid, comm ? comm : "?", name);
	free(comm);
	return pid;
}

void stop_worker(pid_t pid)
{
	int st;

	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "worker %d ended by itself (status 0x%x)", (int)pid,
		      st);
}
/* ---- bounded runs ---- */

/* Runs argv in a process group of its own, stdout and stderr to files, at
 * most timeout_ms; whatever is left of the group afterwards (browser helper
 * processes) is killed by its group id. Returns the wait status, or -1 when
 * the bound was hit. */
int run_bounded(const char *const *argv, const char *out_path, const char *err_path, const char *home,
		int timeout_ms)
{
	pid_t parent = getpid(), pid;
	int64_t deadline = mw_mono_ms() + timeout_ms;
	int st = -1;

	fflush(NULL);
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
		int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		sigset_t none;

		setpgid(0, 0);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(126);
		if (in < 0 || out < 0 || err < 0 || dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 ||
		    dup2(err, STDERR_FILENO) < 0)
			_exit(126);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		if (home) {
			/* Nothing of the browser's lands in root's real home. */
			setenv("HOME", home, 1);
			setenv("XDG_CONFIG_HOME", home, 1);
			setenv("XDG_CACHE_HOME", home, 1);
			setenv("XDG_DATA_HOME", home, 1);
		}
		execv(argv[0], (char *const *)argv);
		dprintf(STDERR_FILENO, "exec %s: %m\n", argv[0]);
		_exit(127);
	}
	setpgid(pid, pid);
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			st = -1;
			break;
		}
		if (mw_mono_ms() >= deadline) {
			kill(-pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			st = -1;
			break;
		}
		mw_sleep_ms(50);
	}
	kill(-pid, SIGKILL);
	return st;
}
/* ---- memory cgroup for a reclaiming worker ---- */


/* A 64 MiB memory cgroup: v1 (hybrid hosts) or v2. */
void memcg_create(struct memcg *cg, const char *tag)
{
	char file[350];
	bool v1 = access(MEMCG_V1_ROOT "/cgroup.procs", F_OK) == 0;
	char *controllers = v1 ? NULL : mw_read_file(CGROUP_V2_ROOT "/cgroup.subtree_control", NULL);
	int r;

	ck_assert_msg(v1 || (controllers && strstr(controllers, "memory")),
		      "no memory cgroup: neither " MEMCG_V1_ROOT " (v1) nor the memory controller in " CGROUP_V2_ROOT
		      "/cgroup.subtree_control (v2)");
	free(controllers);
	snprintf(cg->path, sizeof(cg->path), "%s/memwatch-itest-%d-%s", v1 ? MEMCG_V1_ROOT : CGROUP_V2_ROOT,
		 (int)getpid(), tag);
	snprintf(cg->procs, sizeof(cg->procs), "%s/cgroup.procs", cg->path);
	journal_add("cgroup", cg->path);
	ck_assert_msg(mkdir(cg->path, 0755) == 0, "mkdir %s: %s", cg->path, strerror(errno));
	snprintf(file, sizeof(file), "%s/%s", cg->path, v1 ? "memory.limit_in_bytes" : "memory.max");
	r = mw_write_text(file, "67108864");
	ck_assert_msg(r == 0, "cannot write 64 MiB to %s: %s", file, strerror(-r));
}

void memcg_remove(const struct memcg *cg)
{
	int r = remove_cgroup(cg->path, 10000);

	ck_assert_msg(r == 0, "cannot remove cgroup %s: %s", cg->path, strerror(-r));
}

/* A fresh 1 GiB sparse file on a disk file system (holes of a tmpfs file fill no page cache). */
void sparse_create(char *path, size_t len, const char *tag)
{
	struct statfs sf;
	const char *dir = statfs(mw_tmp_root(), &sf) == 0 && sf.f_type != TMPFS_MAGIC && sf.f_type != RAMFS_MAGIC ?
				  mw_tmp_root() :
				  "/var/tmp";
	int fd;

	snprintf(path, len, "%s/memwatch-itest-%d-%s", dir, (int)getpid(), tag);
	journal_add("file", path);
	unlink(path);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	ck_assert_msg(fd >= 0, "cannot create %s: %s", path, strerror(errno));
	ck_assert_msg(ftruncate(fd, (off_t)GiB) == 0, "truncate %s: %s", path, strerror(errno));
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
}

/* ---- the test program ---- */

TCase *ui_tcase(const char *name, const TTest *test)
{
	TCase *tc = tcase_create(name);

	tcase_add_unchecked_fixture(tc, NULL, replay_after_test);
	tcase_add_checked_fixture(tc, NULL, teardown_daemons);
	tcase_set_timeout(tc, TEST_TIMEOUT_SEC);
	tcase_add_test(tc, test);
	return tc;
}

int ui_main(Suite *suite, const char *const *programs)
{
	struct sigaction sa = { .sa_handler = on_fatal_signal };
	char tmux_dir[300];
	SRunner *sr;
	int failed;

	if (geteuid() != 0) {
		fprintf(stderr, "memwatchd UI tests need root (BPF, cgroups): skipping\n");
		return 77;
	}
	for (; *programs; programs++) {
		if (access(*programs, X_OK) < 0) {
			fprintf(stderr, "%s: %m\n", *programs);
			return 99;
		}
	}
	if (mw_init_tmp_root() < 0) {
		fprintf(stderr, "cannot create a temporary directory: %m\n");
		return 99;
	}
	runner_pid = getpid();
	snprintf(journal_path, sizeof(journal_path), "%s/journal", mw_tmp_root());
	/* The tmux servers' sockets live in our temp tree; never in someone's tmux. */
	snprintf(tmux_dir, sizeof(tmux_dir), "%s/tmux", mw_tmp_root());
	if (mkdir(tmux_dir, 0700) < 0) {
		fprintf(stderr, "mkdir %s: %m\n", tmux_dir);
		return 99;
	}
	setenv("TMUX_TMPDIR", tmux_dir, 1);
	unsetenv("TMUX");
	unsetenv("TMUX_PANE");
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	sr = srunner_create(suite);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	mw_keep_failures(sr);
	srunner_free(sr);
	journal_replay();
	if (failed) {
		mw_dump_daemon_logs(mw_tmp_root(), NULL);
		fprintf(stderr, "daemon logs, screenshots and configs kept in %s\n", mw_tmp_root());
	} else {
		mw_remove_tmp_root();
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
