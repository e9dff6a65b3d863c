/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_CONFIG_H
#define MEMWATCH_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include "macro.h"

#define MEMWATCHD_DEFAULT_CONFIG "/etc/memwatchd/memwatchd.conf"
#define MEMWATCHD_DEFAULT_LISTEN ":9577"

/* Bounds every numeric setting is checked against. */
#define WINDOW_MSEC_MIN 100u
#define WINDOW_MSEC_MAX 60000u
#define SAMPLE_MSEC_MIN 10u /* below this the sampler itself starts to load the machine */
#define HISTORY_MIN 1u
#define HISTORY_MAX 3600u
#define MAX_SERIES_MIN 100u
#define MAX_SERIES_MAX 1000000u
#define MAX_CONNECTIONS_MIN 1u
#define MAX_CONNECTIONS_MAX 1024u
#define EVENT_GATE_MSEC_MAX 10000u
#define QUIET_READ_MSEC_MAX 60000u
#define EVENT_HISTORY_MIN 1u
#define EVENT_HISTORY_MAX 100000u
#define EVENT_BUFFER_MIN 4096u
#define EVENT_BUFFER_MAX (64u << 20)

#define BASIC_AUTH_USERS_MAX 32
#define BASIC_AUTH_NAME_SIZE 64  /* with the NUL */
#define BASIC_AUTH_HASH_SIZE 256 /* with the NUL; yescrypt and SHA-512 crypt need about 120 */

struct basic_auth_user {
	char name[BASIC_AUTH_NAME_SIZE];
	char hash[BASIC_AUTH_HASH_SIZE]; /* crypt(3) */
};

/* basic_auth_users, parsed once when the configuration is loaded. */
struct basic_auth_users {
	size_t n; /* 0: no authentication */
	struct basic_auth_user user[BASIC_AUTH_USERS_MAX];
};

struct daemon_config {
	char listen[128];
	uint32_t window_msec;
	uint32_t sample_msec;
	uint32_t history;
	int log_level; /* syslog priority: 3 err ... 7 debug */
	uint32_t max_series;
	uint32_t max_connections;
	uint32_t event_gate_msec;    /* at most one pressure event of a kind per gate, in the kernel */
	uint32_t quiet_read_msec;    /* longest window while memory stands still; 0: every window is window_msec */
	uint32_t event_history;      /* events kept for /api/v1/events */
	uint32_t event_buffer_bytes; /* BPF ring buffer size (rounded up to a power of two) */
	bool debug_pause_events;     /* tests: stop draining the event channel */
	bool debug_perf_buffer;      /* tests: the perf buffer even where a ring buffer works */
	bool drop_capabilities;      /* after attaching, keep only CAP_BPF and CAP_PERFMON */
	char tls_cert_file[256];     /* PEM; TLS is on when both files are set */
	char tls_key_file[256];
	struct basic_auth_users basic_auth;
};

/* [events]: where events go besides /api/v1/events. */
struct events_config {
	bool journal; /* kills (and pressure instants, rate-limited) to the journal, read back at start */
};

/* A key of a [collector.NAME] section, kept for the collector to interpret. */
struct config_entry {
	char *collector; /* NAME */
	char *key;
	char *value;
	unsigned line;
};

struct config {
	char *path; /* "(built-in defaults)" when no file was read */
	struct daemon_config daemon;
	struct events_config events;
	struct config_entry *entries;
	size_t n_entries;
	char **collectors; /* every [collector.NAME] section seen, even an empty one */
	unsigned *collector_lines;
	size_t n_collectors;
};

struct config_error {
	char message[512]; /* "FILE:LINE: [section] key: what is wrong" */
};

void daemon_config_defaults(struct daemon_config *d);
/* How far past quiet_read_interval a window at rest goes on to end just
 * before a scrape due at a steady rhythm: four times it, up to the key's maximum. */
#define QUIET_FOLLOW_SCRAPES_FACTOR 4u
static inline uint32_t daemon_config_longest_rest_msec(const struct daemon_config *d)
{
	uint64_t m = (uint64_t)d->quiet_read_msec * QUIET_FOLLOW_SCRAPES_FACTOR;

	return m > QUIET_READ_MSEC_MAX ? QUIET_READ_MSEC_MAX : (uint32_t)m;
}

/* The longest a window can last: window_msec, or a window at rest past it. */
static inline uint32_t daemon_config_longest_window_msec(const struct daemon_config *d)
{
	uint32_t rest = daemon_config_longest_rest_msec(d);

	return rest > d->window_msec ? rest : d->window_msec;
}
void events_config_defaults(struct events_config *e);

/* Reads path. With missing_ok, a missing file yields the built-in defaults.
 * Returns 0 or a negative errno (-EINVAL for bad content, -ENOENT for a
 * missing file, -EIO when unreadable) with err describing file, line and key. */
int config_load(const char *path, bool missing_ok, struct config **ret, struct config_error *err);
/* Same, from memory; name stands in for the file name in messages. */
int config_load_string(const char *text, const char *name, struct config **ret, struct config_error *err);
struct config *config_new_defaults(void);
void config_free(struct config *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct config *, config_free)

void config_error_set(struct config_error *err, const char *file, unsigned line,
		      const char *section, const char *key, const char *fmt, ...) _printf_(6, 7);

/* basic_auth_users: blank-separated USER:HASH pairs, USER not empty and
 * without ':', HASH a crypt(3) hash ('$' first, no ':'). Returns 0; -EINVAL
 * when malformed or empty, -E2BIG past BASIC_AUTH_USERS_MAX pairs,
 * -ENAMETOOLONG for a name or hash that does not fit. On failure ret->n = 0. */
int basic_auth_users_parse(const char *list, struct basic_auth_users *ret);
bool basic_auth_users_equal(const struct basic_auth_users *a, const struct basic_auth_users *b);

/* Value parsers shared with the collectors' own keys. Return 0 or -EINVAL/-ERANGE. */
int config_parse_bool(const char *s, bool *ret);
int config_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *ret);
/* "250ms", "1s", "1.5s", "2m"; a bare number means milliseconds. */
int config_parse_duration_msec(const char *s, uint64_t min, uint64_t max, uint64_t *ret);
int config_parse_log_level(const char *s, int *ret);
/* "2", "2%", "0.5%": a percentage from 0 to 100, as a ratio (0 to 1), in
 * parse_double()'s form: digits with at most one point between digits (not
 * "1." or ".5"), no blank, sign, exponent or hex. */
int config_parse_percent(const char *s, double *ratio);
/* An absolute path that fits in buf; otherwise -EINVAL with errmsg set. */
int config_parse_path(const char *s, char *buf, size_t len, char *errmsg, size_t errlen);
const char *log_level_name(int level);

/* A configuration key declared in a table: what it holds, where in its
 * config struct, and its bounds. config_key_apply() parses a value into it
 * and says what is wrong in the words the daemon prints after FILE:LINE:
 * [SECTION] KEY:. */
enum config_key_kind {
	CONFIG_KEY_BOOL,     /* bool */
	CONFIG_KEY_UINT,     /* uint32_t or uint64_t (size), in [min, max] */
	CONFIG_KEY_DURATION, /* the same, in milliseconds (config_parse_duration_msec) */
	CONFIG_KEY_PERCENT,  /* double, a ratio (config_parse_percent) */
	CONFIG_KEY_PATH,     /* char[size], absolute */
	CONFIG_KEY_CHOICE,   /* int: the value of the name in choices */
	CONFIG_KEY_CUSTOM,   /* parse() */
};

struct config_choice {
	const char *name;
	int value;
};

struct config_key {
	const char *name;
	enum config_key_kind kind;
	size_t offset, size;
	uint64_t min, max;
	const char *what;     /* UINT: "a number of windows"; "a number" ("a duration") without */
	const char *max_text; /* UINT, DURATION: in place of max in the message */
	const struct config_choice *choices; /* CHOICE: ends with a NULL name */
	/* CUSTOM: field points at offset; -EINVAL/-ERANGE with errmsg set */
	int (*parse)(const char *value, void *field, char *errmsg, size_t errlen);
};

#define CONFIG_FIELD(type, member) .offset = offsetof(type, member), .size = sizeof(((type *)0)->member)
#define CONFIG_KEY_BOOL(n, type, member) { .name = n, .kind = CONFIG_KEY_BOOL, CONFIG_FIELD(type, member) }
#define CONFIG_KEY_UINT(n, type, member, lo, hi) \
	{ .name = n, .kind = CONFIG_KEY_UINT, CONFIG_FIELD(type, member), .min = lo, .max = hi }
#define CONFIG_KEY_DURATION(n, type, member, lo, hi) \
	{ .name = n, .kind = CONFIG_KEY_DURATION, CONFIG_FIELD(type, member), .min = lo, .max = hi }
#define CONFIG_KEY_PERCENT(n, type, member) { .name = n, .kind = CONFIG_KEY_PERCENT, CONFIG_FIELD(type, member) }
#define CONFIG_KEY_PATH(n, type, member) { .name = n, .kind = CONFIG_KEY_PATH, CONFIG_FIELD(type, member) }
#define CONFIG_KEY_CHOICE(n, type, member, list) \
	{ .name = n, .kind = CONFIG_KEY_CHOICE, CONFIG_FIELD(type, member), .choices = list }
#define CONFIG_KEY_CUSTOM(n, type, member, fn) \
	{ .name = n, .kind = CONFIG_KEY_CUSTOM, CONFIG_FIELD(type, member), .parse = fn }

/* The key of keys[0..n) named name, or NULL. */
const struct config_key *config_key_find(const struct config_key *keys, size_t n, const char *name);
/* Parses value into cfg's field of key. 0, or -EINVAL/-ERANGE with errmsg set. */
int config_key_parse(const struct config_key *key, void *cfg, const char *value, char *errmsg, size_t errlen);
/* config_key_parse() on the key named name: -ENOENT for a key not in keys[0..n). */
int config_key_apply(const struct config_key *keys, size_t n, void *cfg, const char *name, const char *value,
		     char *errmsg, size_t errlen);

#endif
