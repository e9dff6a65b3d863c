// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>
#include "clock.h"
#include "core.h"
#include "http.h"
#include "log.h"
#include "privileges.h"

#define EXIT_USAGE 2

struct options {
	const char *config_path;
	bool config_explicit;
	const char *listen;
	bool check;
	bool top;
	const char *url;
};

static void help(void)
{
	printf("Usage: memwatchd [OPTIONS]\n       memwatchd --top [--url URL]\n\n"
	       "Watches Linux memory pressure from inside the kernel with eBPF and serves it\n"
	       "to Prometheus.\n\n"
	       "  -c, --config FILE    configuration file (default %s;\n"
	       "                       built-in defaults when that file does not exist)\n"
	       "  -l, --listen ADDR:PORT\n"
	       "                       address to serve on, overriding [daemon] listen\n"
	       "                       (default %s: every address, IPv6 and IPv4)\n"
	       "      --check          probe every enabled collector, print a table and exit:\n"
	       "                       0 when each is active or degraded for a known reason, 1 otherwise\n"
	       "      --top            run memwatch-top, the terminal view, on this daemon\n"
	       "                       (its [daemon] listen address and TLS setting)\n"
	       "      --url URL        the daemon --top shows instead\n"
	       "      --version        print the version and exit\n"
	       "  -h, --help           print this help and exit\n\n"
	       "Signals: SIGHUP reloads the configuration; SIGTERM and SIGINT stop.\n",
	       MEMWATCHD_DEFAULT_CONFIG, MEMWATCHD_DEFAULT_LISTEN);
}

static int parse_argv(int argc, char *argv[], struct options *o)
{
	enum { ARG_CHECK = 0x100, ARG_VERSION, ARG_TOP, ARG_URL };
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "listen", required_argument, NULL, 'l' },
		{ "check", no_argument, NULL, ARG_CHECK },
		{ "top", no_argument, NULL, ARG_TOP },
		{ "url", required_argument, NULL, ARG_URL },
		{ "version", no_argument, NULL, ARG_VERSION },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct listen_addr addr;
	int c;

	*o = (struct options){ .config_path = MEMWATCHD_DEFAULT_CONFIG };
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:l:h", longopts, NULL)) >= 0) {
		switch (c) {
		case 'c':
			o->config_path = optarg;
			o->config_explicit = true;
			break;
		case 'l':
			if (listen_addr_parse(optarg, &addr) < 0) {
				fprintf(stderr, "memwatchd: --listen: '%s' is not ADDR:PORT "
						"(e.g. 127.0.0.1:9577, [::1]:9577, :9577)\n", optarg);
				return -EINVAL;
			}
			o->listen = optarg;
			break;
		case ARG_CHECK:
			o->check = true;
			break;
		case ARG_TOP:
			o->top = true;
			break;
		case ARG_URL:
			o->url = optarg;
			break;
		case ARG_VERSION:
			printf("memwatchd %s\n", MEMWATCHD_VERSION);
			return 0;
		case 'h':
			help();
			return 0;
		case ':':
			fprintf(stderr, "memwatchd: option '%s' needs a value (see --help)\n", argv[optind - 1]);
			return -EINVAL;
		default:
			fprintf(stderr, "memwatchd: unknown option '%s' (see --help)\n", argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (o->url && !o->top) {
		fprintf(stderr, "memwatchd: --url goes with --top (see --help)\n");
		return -EINVAL;
	}
	if (optind < argc) {
		fprintf(stderr, "memwatchd: unexpected argument '%s' (see --help)\n", argv[optind]);
		return -EINVAL;
	}
	return 1;
}

/* Config file plus command-line overrides, validated as a whole. */
static int load_config(const struct options *o, struct config **ret_config,
		       struct collector_settings **ret_settings, struct config_error *err)
{
	_cleanup_(config_freep) struct config *c = NULL;
	int r;

	r = config_load(o->config_path, !o->config_explicit, &c, err);
	if (r < 0)
		return r;
	if (o->listen)
		snprintf(c->daemon.listen, sizeof(c->daemon.listen), "%s", o->listen);
	r = collector_settings_build(c, ret_settings, err);
	if (r < 0)
		return r;
	*ret_config = c;
	c = NULL;
	return 0;
}

/* The URL of the daemon a configuration describes: a wildcard address is
 * reached on loopback, and TLS means https. */
static int url_from_config(const struct config *c, char *buf, size_t len)
{
	const struct daemon_config *d = &c->daemon;
	const char *scheme = d->tls_cert_file[0] ? "https" : "http";
	struct listen_addr a;
	char host[INET6_ADDRSTRLEN] = "127.0.0.1";

	if (listen_addr_parse(d->listen, &a) < 0)
		return -EINVAL;
	if (a.ss.ss_family == AF_INET6 && !a.any) {
		const struct in6_addr *ip = &((const struct sockaddr_in6 *)&a.ss)->sin6_addr;

		if (!IN6_IS_ADDR_UNSPECIFIED(ip))
			inet_ntop(AF_INET6, ip, host, sizeof(host));
		else
			snprintf(host, sizeof(host), "::1");
		snprintf(buf, len, "%s://[%s]:%u", scheme, host, a.port);
		return 0;
	}
	if (a.ss.ss_family == AF_INET && !a.any) {
		const struct in_addr *ip = &((const struct sockaddr_in *)&a.ss)->sin_addr;

		if (ip->s_addr != htonl(INADDR_ANY))
			inet_ntop(AF_INET, ip, host, sizeof(host));
	}
	snprintf(buf, len, "%s://%s:%u", scheme, host, a.port);
	return 0;
}

/* memwatchd --top is memwatch-top, a program of its own: found next to this
 * binary (the build tree, or both installed in one directory), where the
 * build installs it, or in PATH. Only returns on failure. */
static int exec_top(const struct options *o)
{
	char url[256], self[PATH_MAX], sibling[PATH_MAX + 16];
	const char *argv[4] = { "memwatch-top", "--url", url, NULL };
	ssize_t n;

	if (o->url) {
		snprintf(url, sizeof(url), "%s", o->url);
	} else {
		_cleanup_(config_freep) struct config *c = NULL;
		struct config_error err = { 0 };
		int r = config_load(o->config_path, !o->config_explicit, &c, &err);

		if (r < 0) {
			fprintf(stderr, "memwatchd: %s\n", err.message[0] ? err.message : strerror(-r));
			return EXIT_USAGE;
		}
		if (o->listen)
			snprintf(c->daemon.listen, sizeof(c->daemon.listen), "%s", o->listen);
		if (url_from_config(c, url, sizeof(url)) < 0) {
			fprintf(stderr, "memwatchd: --top: no URL for listen address '%s'\n", c->daemon.listen);
			return EXIT_USAGE;
		}
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			snprintf(sibling, sizeof(sibling), "%s/memwatch-top", self);
			execv(sibling, (char *const *)argv);
		}
	}
	execv(MEMWATCH_TOP_PATH, (char *const *)argv);
	execvp("memwatch-top", (char *const *)argv);
	fprintf(stderr, "memwatchd: --top runs memwatch-top, which is not installed (not next to memwatchd, not %s, "
			"not in PATH): %m\n", MEMWATCH_TOP_PATH);
	return EXIT_FAILURE;
}

static int run_check(struct core *core)
{
	size_t i;
	bool ok;

	core_start_collectors(core);
	printf("%-10s %-9s %-11s %s\n", "COLLECTOR", "STATE", "MODE", "REASON");
	for (i = 0; i < n_all_collectors; i++) {
		const struct collector_instance *ci = &core->collectors[i];

		printf("%-10s %-9s %-11s %s\n", ci->ops->name, collector_state_name(ci->status.state),
		       ci->status.mode[0] ? ci->status.mode : "-", ci->status.reason);
	}
	for (i = 0; i < n_all_collectors; i++)
		if (core->collectors[i].status.state == COLLECTOR_DEGRADED && core->collectors[i].status.unprivileged)
			log_error("Collector %s is degraded for lack of privilege (CAP_BPF and CAP_PERFMON), "
				  "not for a kernel limit", core->collectors[i].ops->name);
	ok = core_all_healthy(core);
	core_stop_collectors(core);
	return ok ? 0 : 1;
}

static void notify_status(const struct core *core, const char *prefix)
{
	char status[1024];

	core_status_line(core, status, sizeof(status));
	sd_notifyf(false, "%sSTATUS=%s", prefix, status);
}

/* How long the main loop may sleep until DEADLINE. A poll() timeout wakes it
 * with one system call, where a timerfd took three (arm, poll, read): ten
 * wake-ups a second at the default sampling. */
static struct timespec time_until(uint64_t deadline_mono_usec)
{
	uint64_t now = now_mono_usec(), left = deadline_mono_usec > now ? deadline_mono_usec - now : 0;

	return (struct timespec){ .tv_sec = (time_t)(left / USEC_PER_SEC), .tv_nsec = (long)(left % USEC_PER_SEC) * 1000 };
}

static int start_http(struct core *core, struct http_server **srv, int listen_fd)
{
	const struct daemon_config *d = &core->config->daemon;
	struct listen_addr addr;

	if (listen_fd < 0 && listen_addr_parse(d->listen, &addr) < 0)
		return log_error_errno(EINVAL, "Invalid listen address '%s'", d->listen);
	return http_server_start(srv, &addr, d->listen, listen_fd, d->max_connections, core->ring, core->events,
				 daemon_config_longest_window_msec(d),
				 &(struct http_security){ d->tls_cert_file, d->tls_key_file, &d->basic_auth });
}

/* Start-up parses the kernel's BTF and the BPF objects (heap, megabytes):
 * handed back once the collectors run. Clean pages of the binary and its
 * libraries stay mapped: dropping them would only make the RSS figure
 * smaller while they fault back in. */
static void release_startup_memory(void)
{
	malloc_trim(0);
}

static void reload(struct core *core, const struct options *o, struct http_server **srv, bool socket_activated)
{
	_cleanup_(config_freep) struct config *c = NULL;
	struct collector_settings *settings = NULL;
	struct config_error err = { 0 };
	char old_listen[sizeof(core->config->daemon.listen)];
	unsigned old_max_conn = core->config->daemon.max_connections;
	bool security_changed;
	int r;

	sd_notifyf(false, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64 "\nSTATUS=Reloading configuration",
		   now_mono_usec());
	core->reloads_total++;
	r = load_config(o, &c, &settings, &err);
	if (r < 0) {
		core->reload_failures_total++;
		log_error("Reload failed, keeping the running configuration: %s",
			  err.message[0] ? err.message : strerror(-r));
		notify_status(core, "READY=1\n");
		return;
	}
	snprintf(old_listen, sizeof(old_listen), "%s", core->config->daemon.listen);
	security_changed = strcmp(c->daemon.tls_cert_file, core->config->daemon.tls_cert_file) != 0 ||
			   strcmp(c->daemon.tls_key_file, core->config->daemon.tls_key_file) != 0 ||
			   !basic_auth_users_equal(&c->daemon.basic_auth, &core->config->daemon.basic_auth);
	r = core_reload(core, c, settings);
	c = NULL;
	if (r < 0) {
		core->reload_failures_total++;
		log_error_errno(r, "Reload failed, keeping the running configuration: %m");
		notify_status(core, "READY=1\n");
		return;
	}
	log_set_max_level(core->config->daemon.log_level);
	http_server_set_longest_window(*srv, daemon_config_longest_window_msec(&core->config->daemon));
	if (!socket_activated && (strcmp(old_listen, core->config->daemon.listen) != 0 ||
				  old_max_conn != core->config->daemon.max_connections || security_changed)) {
		struct http_server *fresh = NULL;
		bool same_address = strcmp(old_listen, core->config->daemon.listen) == 0;

		/* A new address is bound before the old one is let go, so a port in
		 * use leaves us serving where we were. The same address has to be
		 * released first. */
		if (same_address) {
			http_server_stop(*srv);
			*srv = NULL;
		}
		r = start_http(core, &fresh, -1);
		if (r < 0) {
			log_error("Could not listen on %s; staying on %s", core->config->daemon.listen, old_listen);
			snprintf(core->config->daemon.listen, sizeof(core->config->daemon.listen), "%s", old_listen);
			core->config->daemon.max_connections = old_max_conn;
			if (same_address && start_http(core, &fresh, -1) < 0)
				log_error("Could not listen on %s again; /metrics is unavailable", old_listen);
		}
		if (fresh) {
			http_server_stop(*srv);
			*srv = fresh;
		}
	}
	release_startup_memory(); /* a collector restart parsed BTF again */
	log_info("Configuration reloaded from %s", core->config->path);
	notify_status(core, "READY=1\n");
}

#define TRIM_EVERY_WINDOWS 10
#define TRIM_FREE_BYTES (512 * 1024)

/* A window frees as much as it allocates (its samples, the window that left
 * the history), in blocks under the mmap threshold. Free pages inside the
 * heap go back only once they add up to TRIM_FREE_BYTES: trimming whatever
 * was free every few windows handed back pages the next window faulted in
 * again (a tenth of the idle daemon's time). The top of the heap is glibc's
 * (M_TRIM_THRESHOLD). */
static void trim_heap_if_fragmented(void)
{
	struct mallinfo2 mi = mallinfo2();

	if (mi.fordblks > mi.keepcost && mi.fordblks - mi.keepcost >= TRIM_FREE_BYTES)
		malloc_trim(0);
}

#define MAX_WAKE_FDS 8
#define MAX_STIR_FDS 2

static bool any_readable(const struct pollfd *fds, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (fds[i].revents)
			return true;
	return false;
}

/* The first end on the grid of window_end that is still ahead of now. */
static uint64_t next_end_on_grid(uint64_t window_end, uint64_t length, uint64_t now)
{
	while (window_end >= now + length)
		window_end -= length;
	return window_end;
}

/* The scrape a window at rest may go on to. At its start, the first due
 * after its first end and the margin: one due sooner reads the window that
 * just ended. At an end passed over, the first due after now: the window
 * ends before it. */
static void expect_reader(struct core *core, struct http_server *srv, uint64_t now, bool starting)
{
	uint64_t after = now;

	if (starting)
		after += core->config->daemon.window_msec * USEC_PER_MSEC + READER_MARGIN_USEC;
	core_expect_reader(core, http_server_next_scrape(srv, now, after));
}

static int main_loop(struct core *core, const struct options *o, struct http_server **srv, int sfd,
		     bool socket_activated)
{
	uint64_t watchdog_usec = 0, next_watchdog = UINT64_MAX, next_sample, window_end;
	unsigned windows_since_trim = 0;

	if (sd_watchdog_enabled(false, &watchdog_usec) > 0 && watchdog_usec > 0) {
		next_watchdog = now_mono_usec() + watchdog_usec / 2;
		log_debug("Watchdog enabled: pinging every %" PRIu64 " ms", watchdog_usec / 2000);
	}
	next_sample = core->window_start_mono_usec + core->config->daemon.sample_msec * USEC_PER_MSEC;
	window_end = core->window_start_mono_usec + core->config->daemon.window_msec * USEC_PER_MSEC;

	for (;;) {
		struct pollfd pfd[1 + MAX_STIR_FDS + MAX_WAKE_FDS] = { { .fd = sfd, .events = POLLIN } };
		size_t n_stir = core_stir_fds(core, pfd + 1, MAX_STIR_FDS);
		size_t n_wake = core_wake_fds(core, pfd + 1 + n_stir, MAX_WAKE_FDS);
		struct timespec timeout;
		/* Where the kernel samples, the daemon wakes only at the window's end. */
		bool sampling = core_wants_samples(core);
		uint64_t deadline = sampling && next_sample < window_end ? next_sample : window_end, now;
		const struct daemon_config *d;

		if (next_watchdog < deadline)
			deadline = next_watchdog;
		timeout = time_until(deadline);
		if (ppoll(pfd, 1 + n_stir + n_wake, &timeout, NULL) < 0) {
			if (errno == EINTR)
				continue;
			return log_error_errno(errno, "poll() failed: %m");
		}
		d = &core->config->daemon;
		/* Something moved while the window went on: it ends at the next end
		 * on its grid, where core_window_goes_on asks again. */
		if (any_readable(pfd + 1, n_stir)) {
			if (core->watching)
				window_end = next_end_on_grid(window_end, d->window_msec * USEC_PER_MSEC, now_mono_usec());
			core_unwatch(core);
		}
		/* Before a reload can restart the collectors that own them. */
		if (n_wake)
			core_wake(core, pfd + 1 + n_stir, n_wake, now_mono_usec());
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (si.ssi_signo == SIGHUP) {
					core_unwatch(core);
					reload(core, o, srv, socket_activated);
					next_sample = now_mono_usec();
					window_end = core->window_start_mono_usec +
						     core->config->daemon.window_msec * USEC_PER_MSEC;
				} else {
					log_info("Received %s, stopping", strsignal((int)si.ssi_signo));
					return 0;
				}
			}
		}
		now = now_mono_usec();
		d = &core->config->daemon;
		if (now >= next_watchdog) {
			sd_notify(false, "WATCHDOG=1");
			next_watchdog = now + watchdog_usec / 2;
		}
		if (now >= window_end)
			expect_reader(core, *srv, now, false);
		if (now >= window_end && core_window_goes_on(core, now)) {
			window_end += d->window_msec * USEC_PER_MSEC;
			if (window_end <= now)
				window_end = now + d->window_msec * USEC_PER_MSEC;
			if (!core->watching)
				(void)core_watch(core, &window_end);
		} else if (now >= window_end) {
			core_end_window(core, now, now_real_usec());
			if (++windows_since_trim >= TRIM_EVERY_WINDOWS) {
				trim_heap_if_fragmented();
				windows_since_trim = 0;
			}
			/* Tumbling windows stay on their grid unless we fell a whole window behind. */
			window_end += d->window_msec * USEC_PER_MSEC;
			if (window_end <= now)
				window_end = now + d->window_msec * USEC_PER_MSEC;
			next_sample = now + d->sample_msec * USEC_PER_MSEC;
			/* Memory that stays still lets it sleep through the window. */
			expect_reader(core, *srv, now, true);
			(void)core_watch(core, &window_end);
		} else if (sampling && now >= next_sample) {
			core_sample(core, now);
			next_sample += d->sample_msec * USEC_PER_MSEC;
			if (next_sample <= now)
				next_sample = now + d->sample_msec * USEC_PER_MSEC;
		}
	}
}

int main(int argc, char *argv[])
{
	struct options o;
	_cleanup_(config_freep) struct config *config = NULL;
	_cleanup_(collector_settings_freep) struct collector_settings *settings = NULL;
	struct config_error err = { 0 };
	/* Declared in the order they are torn down last to first: the server
	 * stops before the core, which stops the collectors. */
	_cleanup_close_ int sfd = -1;
	_cleanup_(core_done) struct core core = { 0 };
	_cleanup_(http_server_stopp) struct http_server *srv = NULL;
	int listen_fd = -1, r;
	bool socket_activated = false;
	sigset_t mask;

	/* Fixed, before anything is allocated: parsing the kernel BTF at start
	 * frees blocks of megabytes, which would raise glibc's dynamic threshold
	 * so that every later large block came from the heap and pinned it. */
	(void)mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	/* The main loop trims what is free inside the heap; glibc's own trim
	 * after every free at the top of the heap (a directory stream, a window's
	 * text) shrank and regrew the heap each window: a TLB flush and page
	 * faults every second for nothing. */
	(void)mallopt(M_TRIM_THRESHOLD, 1024 * 1024);

	r = parse_argv(argc, argv, &o);
	if (r <= 0)
		return r < 0 ? EXIT_USAGE : EXIT_SUCCESS;
	if (o.top)
		return exec_top(&o);

	/* Line-buffered so journald and test harnesses see each line as it is written. */
	setvbuf(stderr, NULL, _IOLBF, 0);
	log_setup_libbpf();
	r = load_config(&o, &config, &settings, &err);
	if (r < 0) {
		fprintf(stderr, "<3>memwatchd: %s\n", err.message[0] ? err.message : strerror(-r));
		return EXIT_USAGE;
	}
	log_set_max_level(config->daemon.log_level);
	r = core_init(&core, TAKE_PTR(config), TAKE_PTR(settings));
	if (r < 0) {
		log_error_errno(r, "Failed to initialise: %m");
		return EXIT_FAILURE;
	}
	if (o.check)
		return run_check(&core);

	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	/* Blocked before any thread starts, so only the signalfd sees them. */
	if (pthread_sigmask(SIG_BLOCK, &mask, NULL) != 0 ||
	    (sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		log_error_errno(errno, "Failed to set up signal handling: %m");
		return EXIT_FAILURE;
	}
	signal(SIGPIPE, SIG_IGN);

	log_info("memwatchd %s starting, configuration: %s", MEMWATCHD_VERSION, core.config->path);
	r = sd_listen_fds(true);
	if (r > 1) {
		log_error("Got %d sockets from systemd, expected one", r);
		return EXIT_FAILURE;
	}
	socket_activated = r == 1;
	if (socket_activated) {
		listen_fd = SD_LISTEN_FDS_START;
	} else {
		struct listen_addr addr;

		/* Bound now, while we may still bind a port below 1024. */
		if (listen_addr_parse(core.config->daemon.listen, &addr) < 0 ||
		    (listen_fd = http_bind_listen(&addr, core.config->daemon.listen)) < 0)
			return EXIT_FAILURE;
	}
	/* Reads the kills of earlier runs back from the journal: while we may. */
	core_open_events(&core);
	core_start_collectors(&core);
	if (core.config->daemon.drop_capabilities) {
		r = drop_capabilities(core_capabilities_wanted(&core));
		if (r < 0)
			log_warning_errno(r, "Failed to drop capabilities, running with all of them: %m");
	}
	(void)core_start_events(&core); /* logs why not */
	/* Publish a first window right away so /metrics answers as soon as we are READY. */
	core_sample(&core, now_mono_usec());
	core_end_window(&core, now_mono_usec(), now_real_usec());
	if (start_http(&core, &srv, listen_fd) < 0)
		return EXIT_FAILURE;
	/* Loading BPF objects parses the kernel's BTF (megabytes, freed again):
	 * hand that heap back, and the pages only start-up used. */
	release_startup_memory();
	log_info("Serving /metrics on %s", socket_activated ? "the socket passed by systemd" : core.config->daemon.listen);

	notify_status(&core, "READY=1\n");
	r = main_loop(&core, &o, &srv, sfd, socket_activated);
	sd_notify(false, "STOPPING=1\nSTATUS=Stopping");
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
