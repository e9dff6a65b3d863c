// SPDX-License-Identifier: GPL-2.0
/* memwatch-top: a terminal view of a running memwatchd, drawn from its JSON
 * API (/api/v1/windows, /api/v1/events) over HTTP or HTTPS with basic auth.
 * A client like any other: it shares no code with the daemon but a UTF-8
 * check, and the daemon links none of libcurl, jansson or ncurses. */
#include <curl/curl.h>
#include <curses.h>
#include <errno.h>
#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "catalogue.h"
#include "client.h"
#include "clock.h"
#include "macro.h"
#include "view.h"

#define EXIT_USAGE 2
#define DEFAULT_URL "http://127.0.0.1:9577"
#define RETRY_MS 1000
#define KEY_POLL_MS 200
#define PASSWORD_MAX 4096

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = 1;
}

struct options {
	const char *url;
	const char *user;
	const char *password_file;
	const char *cacert;
	double interval; /* seconds; 0 = once per daemon window */
};

static void help(void)
{
	printf("Usage: memwatch-top [OPTIONS]\n\n"
	       "Shows a running memwatchd in the terminal: available memory and its trend,\n"
	       "reclaim stalls per process and cgroup, OOM kills, collectors. q quits;\n"
	       "w switches to the Workloads screen (the top cgroups by reclaim stall time,\n"
	       "PSI and usage against limit, as on the status page) and back.\n\n"
	       "      --url URL        the daemon, http:// or https:// (default %s;\n"
	       "                       without a port, 9577)\n"
	       "      --user NAME      user for HTTP basic authentication\n"
	       "      --password-file FILE\n"
	       "                       the password: the first line of FILE\n"
	       "      --cacert FILE    CA certificate(s), PEM, that signed the daemon's\n"
	       "                       certificate (default: the system's CA store)\n"
	       "      --interval SECONDS\n"
	       "                       refresh every SECONDS (default: once per daemon window)\n"
	       "      --version        print the version and exit\n"
	       "  -h, --help           print this help and exit\n",
	       DEFAULT_URL);
}

static int parse_argv(int argc, char *argv[], struct options *o)
{
	enum { ARG_URL = 0x100, ARG_USER, ARG_PASSWORD_FILE, ARG_CACERT, ARG_INTERVAL, ARG_VERSION };
	static const struct option longopts[] = {
		{ "url", required_argument, NULL, ARG_URL },
		{ "user", required_argument, NULL, ARG_USER },
		{ "password-file", required_argument, NULL, ARG_PASSWORD_FILE },
		{ "cacert", required_argument, NULL, ARG_CACERT },
		{ "interval", required_argument, NULL, ARG_INTERVAL },
		{ "version", no_argument, NULL, ARG_VERSION },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	char *end;
	int c;

	*o = (struct options){ .url = DEFAULT_URL };
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) >= 0) {
		switch (c) {
		case ARG_URL:
			o->url = optarg;
			break;
		case ARG_USER:
			o->user = optarg;
			break;
		case ARG_PASSWORD_FILE:
			o->password_file = optarg;
			break;
		case ARG_CACERT:
			if (access(optarg, R_OK) < 0) {
				fprintf(stderr, "memwatch-top: --cacert: %s: %m\n", optarg);
				return -EINVAL;
			}
			o->cacert = optarg;
			break;
		case ARG_INTERVAL:
			errno = 0;
			o->interval = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->interval >= 0.1 && o->interval <= 86400)) {
				fprintf(stderr, "memwatch-top: --interval: '%s' is not 0.1 to 86400 seconds\n", optarg);
				return -EINVAL;
			}
			break;
		case ARG_VERSION:
			printf("memwatch-top %s\n", MEMWATCHD_VERSION);
			return 0;
		case 'h':
			help();
			return 0;
		case ':':
			fprintf(stderr, "memwatch-top: option '%s' needs a value (see --help)\n", argv[optind - 1]);
			return -EINVAL;
		default:
			fprintf(stderr, "memwatch-top: unknown option '%s' (see --help)\n", argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "memwatch-top: unexpected argument '%s' (see --help)\n", argv[optind]);
		return -EINVAL;
	}
	if (!o->user != !o->password_file) {
		fprintf(stderr, "memwatch-top: --user and --password-file go together "
				"(a password is never an argument)\n");
		return -EINVAL;
	}
	return 1;
}

/* Returns NULL, for p = erase_and_free(p). */
static char *erase_and_free(char *secret)
{
	if (secret) {
		explicit_bzero(secret, strlen(secret));
		free(secret);
	}
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(char *, erase_and_free);

/* The first line of path, without its line end. */
static int read_password(const char *path, char **ret)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	_cleanup_(erase_and_freep) char *line = NULL;
	size_t n;

	if (!f) {
		fprintf(stderr, "memwatch-top: --password-file: %s: %m\n", path);
		return -errno;
	}
	line = calloc(1, PASSWORD_MAX + 2);
	if (!line)
		return -ENOMEM;
	if (!fgets(line, PASSWORD_MAX + 2, f))
		line[0] = '\0';
	n = strlen(line);
	if (n > PASSWORD_MAX) {
		fprintf(stderr, "memwatch-top: --password-file: %s: first line longer than %d bytes\n", path,
			PASSWORD_MAX);
		return -EINVAL;
	}
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	if (n == 0) {
		fprintf(stderr, "memwatch-top: --password-file: %s: no password on its first line\n", path);
		return -EINVAL;
	}
	*ret = TAKE_PTR(line);
	return 0;
}

/* The daemon's window length from the newest window, in ms; 0 if unknown. */
static int window_ms(const json_t *windows)
{
	const json_t *list = json_object_get(windows, "windows");
	size_t n = json_array_size(list);
	const json_t *f = n ? json_object_get(json_object_get(json_array_get(list, n - 1), "metrics"),
					      METRIC_NAME(MW_WINDOW_SECONDS))
			    : NULL;
	const json_t *v = json_object_get(json_array_get(f, 0), "value");
	double w = json_is_number(v) ? json_number_value(v) : NAN;

	/* Redraw once per window; never faster than 10 times a second. */
	return w >= 0.1 && w <= 60 ? (int)(w * 1000) : 0;
}

struct state {
	struct top_client *client;
	json_t *windows, *events;
	struct chart_history history;
	bool want_full;       /* ask for a whole chart's width of windows */
	bool workloads;       /* the Workloads screen (key w) */
	enum top_failure failure;
	char problem[600];
};

/* One refresh; returns the ms until the next. */
static int refresh_data(struct state *s, double interval)
{
	char path[64], err[600];
	json_t *windows = NULL, *events = NULL;
	int want = COLS - 4, ms;

	/* After the first answer only the newest windows (the chart keeps the
	 * rest), back to the last process walk: the faults table shows its deltas. */
	if (!s->want_full && s->history.n > 0)
		want = 4 + view_windows_since_fault_walk(s->windows);
	want = want < 2 ? 2 : want > CHART_MAX ? CHART_MAX : want;
	snprintf(path, sizeof(path), "/api/v1/windows?windows=%d", want);
	s->failure = top_client_get_json(s->client, path, &windows, err, sizeof(err));
	if (s->failure == TOP_OK)
		s->failure = top_client_get_json(s->client, "/api/v1/events", &events, err, sizeof(err));
	json_decref(s->windows);
	json_decref(s->events);
	s->windows = windows;
	s->events = events;
	if (s->failure != TOP_OK) {
		snprintf(s->problem, sizeof(s->problem), "%s", err);
		json_decref(s->windows);
		s->windows = NULL;
		return RETRY_MS;
	}
	s->want_full = chart_history_add(&s->history, windows);
	ms = interval > 0 ? (int)(interval * 1000) : window_ms(windows);
	return ms > 0 ? ms : RETRY_MS;
}

static void draw(const struct state *s, bool utf8, bool colors)
{
	static const char *const titles[] = {
		[TOP_OK] = "",
		[TOP_UNREACHABLE] = "Cannot reach the daemon",
		[TOP_AUTH] = "Authentication failed",
		[TOP_BAD_ANSWER] = "Unexpected answer",
	};
	const struct view v = {
		.url = top_client_url(s->client),
		.windows = s->windows,
		.events = s->events,
		.history = &s->history,
		.problem_title = titles[s->failure],
		.problem = s->failure == TOP_OK ? NULL : s->problem,
		.utf8 = utf8,
		.colors = colors,
		.workloads = s->workloads,
	};

	view_draw(&v);
}

static bool start_colors(void)
{
	if (!has_colors() || start_color() == ERR)
		return false;
	/* -1: the terminal's own background (and foreground) stay. */
	use_default_colors();
	init_pair(PAIR_ERROR, COLOR_RED, -1);
	init_pair(PAIR_WARN, COLOR_YELLOW, -1);
	init_pair(PAIR_OK, COLOR_GREEN, -1);
	init_pair(PAIR_CHART, COLOR_CYAN, -1);
	return true;
}

static int run(struct state *s, double interval)
{
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: a key wait ends at once */
	bool utf8, colors;
	SCREEN *screen;

	setlocale(LC_ALL, "");
	/* Numbers as the daemon and its docs write them. */
	setlocale(LC_NUMERIC, "C");
	utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "memwatch-top: needs a terminal (stdin and stdout)\n");
		return EXIT_FAILURE;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	screen = newterm(NULL, stdout, stdin);
	if (!screen) {
		fprintf(stderr, "memwatch-top: cannot drive this terminal (TERM=%s)\n", getenv("TERM") ?: "");
		return EXIT_FAILURE;
	}
	cbreak();
	noecho();
	curs_set(0);
	keypad(stdscr, TRUE);
	colors = start_colors();

	while (!interrupted) {
		int64_t deadline;
		bool quit = false;

		deadline = (int64_t)(now_mono_usec() / 1000) + refresh_data(s, interval);
		draw(s, utf8, colors);
		while (!interrupted && !quit) {
			int64_t left = deadline - (int64_t)(now_mono_usec() / 1000);
			int ch;

			if (left <= 0)
				break;
			timeout(left < KEY_POLL_MS ? (int)left : KEY_POLL_MS);
			ch = getch();
			if (ch == 'q' || ch == 'Q' || ch == 3)
				quit = true;
			else if (ch == 'w' || ch == 'W') {
				s->workloads = !s->workloads;
				draw(s, utf8, colors);
			} else if (ch == KEY_RESIZE) {
				/* Wider: the next refresh fetches enough windows to fill the chart. */
				if ((size_t)COLS > s->history.n + 4)
					s->want_full = true;
				draw(s, utf8, colors);
			}
		}
		if (quit)
			break;
	}
	endwin();
	delscreen(screen);
	return EXIT_SUCCESS;
}

int main(int argc, char *argv[])
{
	struct state s = { 0 };
	struct options o;
	_cleanup_(erase_and_freep) char *password = NULL;
	char err[600] = "";
	int r, ret;

	r = parse_argv(argc, argv, &o);
	if (r <= 0)
		return r < 0 ? EXIT_USAGE : EXIT_SUCCESS;
	if (o.password_file && read_password(o.password_file, &password) < 0)
		return EXIT_USAGE;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "memwatch-top: libcurl failed to initialise\n");
		return EXIT_FAILURE;
	}
	r = top_client_new(&s.client,
			   &(struct top_client_options){ .url = o.url,
							 .user = o.user,
							 .password = password,
							 .cacert = o.cacert,
							 .interrupted = &interrupted },
			   err, sizeof(err));
	/* Not kept for the whole run: the client has its own copy. */
	password = erase_and_free(password);
	if (r < 0) {
		fprintf(stderr, "memwatch-top: %s\n", err[0] ? err : strerror(-r));
		curl_global_cleanup();
		return r == -EINVAL ? EXIT_USAGE : EXIT_FAILURE;
	}
	ret = run(&s, o.interval);
	json_decref(s.windows);
	json_decref(s.events);
	top_client_free(s.client);
	curl_global_cleanup();
	return ret;
}
