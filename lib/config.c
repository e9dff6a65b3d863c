// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "config.h"
#include "netaddr.h"
#include "parse.h"

#define COLLECTOR_PREFIX "collector."
/* inih keeps section names in a 50-byte buffer (MAX_SECTION in ini.c, not
 * exported) and silently cuts longer ones. */
#define INI_SECTION_MAX 49

/* Debian's inih is built without INI_HANDLER_LINENO and with 200-byte lines,
 * so we feed it through our own reader, which counts lines, rejects overlong
 * ones instead of letting them split, and sees section headers. */
struct line_reader {
	FILE *file;
	const char *text;
	unsigned line;
	char section[128];
};

struct parse_state {
	struct line_reader *reader;
	struct config *cfg;
	const char *file;
	struct config_error *err;
	int r;
	/* daemon keys already seen, to reject duplicates */
	unsigned daemon_seen;
	unsigned daemon_line[24]; /* where each daemon key was set, by daemon_keys[] index */
	unsigned events_seen;     /* the same for [events] */
};

void daemon_config_defaults(struct daemon_config *d)
{
	*d = (struct daemon_config){
		.window_msec = 1000,
		.sample_msec = 100,
		.history = 60,
		.log_level = 6,
		.max_series = 20000,
		.max_connections = 64,
		.event_gate_msec = 50,
		.quiet_read_msec = 5000,
		.event_history = 1000,
		.event_buffer_bytes = 64 * 1024,
		.drop_capabilities = true,
	};
	snprintf(d->listen, sizeof(d->listen), "%s", MEMWATCHD_DEFAULT_LISTEN);
}

void events_config_defaults(struct events_config *e)
{
	*e = (struct events_config){ .journal = true };
}

void config_error_set(struct config_error *err, const char *file, unsigned line,
		      const char *section, const char *key, const char *fmt, ...)
{
	char what[384];
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (section && key)
		snprintf(err->message, sizeof(err->message), "%s:%u: [%s] %s: %s", file, line, section, key, what);
	else if (section)
		snprintf(err->message, sizeof(err->message), "%s:%u: [%s]: %s", file, line, section, what);
	else
		snprintf(err->message, sizeof(err->message), "%s:%u: %s", file, line, what);
}

int config_parse_bool(const char *s, bool *ret)
{
	static const char *const yes[] = { "1", "yes", "true", "on" };
	static const char *const no[] = { "0", "no", "false", "off" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(yes); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*ret = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* The digits at *p; advances *p past them. */
static int parse_digits(const char **p, uint64_t *ret)
{
	return parse_u64_prefix(p, *p + strlen(*p), ret);
}

int config_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
	uint64_t v;
	int r;

	r = parse_u64(s, s + strlen(s), &v);
	if (r < 0)
		return r == -ERANGE ? r : -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

int config_parse_duration_msec(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
	uint64_t whole, frac = 0, frac_div = 1, mult, v;
	int r;

	r = parse_digits(&s, &whole);
	if (r < 0)
		return r;
	if (*s == '.') {
		s++;
		if (*s < '0' || *s > '9')
			return -EINVAL;
		for (; *s >= '0' && *s <= '9'; s++) {
			if (frac_div < 1000000000ULL) {
				frac = frac * 10 + (uint64_t)(*s - '0');
				frac_div *= 10;
			}
		}
	}
	if (*s == '\0' || strcmp(s, "ms") == 0)
		mult = 1;
	else if (strcmp(s, "s") == 0)
		mult = 1000;
	else if (strcmp(s, "m") == 0 || strcmp(s, "min") == 0)
		mult = 60000;
	else if (strcmp(s, "h") == 0)
		mult = 3600000;
	else
		return -EINVAL;
	if (whole > UINT64_MAX / mult / 2)
		return -ERANGE;
	v = whole * mult + frac * mult / frac_div;
	if (v < min || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

static const char *const log_level_names[] = {
	[3] = "err", [4] = "warning", [5] = "notice", [6] = "info", [7] = "debug",
};

int config_parse_log_level(const char *s, int *ret)
{
	size_t i;

	for (i = 3; i < ARRAY_SIZE(log_level_names); i++)
		if (strcasecmp(s, log_level_names[i]) == 0) {
			*ret = (int)i;
			return 0;
		}
	if (strcasecmp(s, "error") == 0) {
		*ret = 3;
		return 0;
	}
	if (strcasecmp(s, "warn") == 0) {
		*ret = 4;
		return 0;
	}
	return -EINVAL;
}

int config_parse_percent(const char *s, double *ratio)
{
	size_t len = strlen(s);
	double v;

	if (len > 0 && s[len - 1] == '%')
		len--;
	if (parse_double(s, s + len, &v) < 0 || v > 100)
		return -EINVAL;
	*ratio = v / 100;
	return 0;
}

int config_parse_path(const char *s, char *buf, size_t len, char *errmsg, size_t errlen)
{
	if (s[0] != '/' || strlen(s) >= len) {
		snprintf(errmsg, errlen, "'%s' is not an absolute path shorter than %zu bytes", s, len);
		return -EINVAL;
	}
	snprintf(buf, len, "%s", s);
	return 0;
}

const char *log_level_name(int level)
{
	if (level >= 3 && level < (int)ARRAY_SIZE(log_level_names))
		return log_level_names[level];
	return "unknown";
}

static int basic_auth_user_parse(const char *p, size_t len, struct basic_auth_user *ret)
{
	const char *colon = memchr(p, ':', len), *hash;
	size_t name_len, hash_len;

	if (!colon || colon == p || colon[1] != '$')
		return -EINVAL;
	name_len = (size_t)(colon - p);
	hash = colon + 1;
	hash_len = len - name_len - 1;
	if (memchr(hash, ':', hash_len))
		return -EINVAL;
	if (name_len >= sizeof(ret->name) || hash_len >= sizeof(ret->hash))
		return -ENAMETOOLONG;
	memcpy(ret->name, p, name_len);
	ret->name[name_len] = '\0';
	memcpy(ret->hash, hash, hash_len);
	ret->hash[hash_len] = '\0';
	return 0;
}

int basic_auth_users_parse(const char *list, struct basic_auth_users *ret)
{
	const char *end = list + strlen(list), *p;
	int r = 0;

	ret->n = 0;
	for (p = parse_skip_blanks(list, end); p < end; p = parse_skip_blanks(p, end)) {
		size_t len = (size_t)(parse_word_end(p, end) - p);

		if (ret->n == BASIC_AUTH_USERS_MAX) {
			r = -E2BIG;
			break;
		}
		r = basic_auth_user_parse(p, len, &ret->user[ret->n]);
		if (r < 0)
			break;
		ret->n++;
		p += len;
	}
	if (r == 0 && ret->n == 0)
		r = -EINVAL;
	if (r < 0)
		ret->n = 0;
	return r;
}

bool basic_auth_users_equal(const struct basic_auth_users *a, const struct basic_auth_users *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->user[i].name, b->user[i].name) != 0 || strcmp(a->user[i].hash, b->user[i].hash) != 0)
			return false;
	return true;
}

static int parse_listen(const char *value, void *field, char *errmsg, size_t errlen)
{
	struct listen_addr a;

	if (strlen(value) >= sizeof(((struct daemon_config *)NULL)->listen) || listen_addr_parse(value, &a) < 0) {
		snprintf(errmsg, errlen, "'%s' is not ADDR:PORT (e.g. 127.0.0.1:9577, [::1]:9577, :9577)", value);
		return -EINVAL;
	}
	snprintf(field, sizeof(((struct daemon_config *)NULL)->listen), "%s", value);
	return 0;
}

static int parse_log_level_key(const char *value, void *field, char *errmsg, size_t errlen)
{
	if (config_parse_log_level(value, field) < 0) {
		snprintf(errmsg, errlen, "'%s' is not one of err, warning, notice, info, debug", value);
		return -EINVAL;
	}
	return 0;
}

static int parse_tls_file(const char *value, void *field, char *errmsg, size_t errlen)
{
	size_t size = sizeof(((struct daemon_config *)NULL)->tls_cert_file);

	if (value[0] != '/' || strlen(value) >= size) {
		snprintf(errmsg, errlen, "'%s' is not an absolute path", value);
		return -EINVAL;
	}
	if (access(value, R_OK) < 0) {
		snprintf(errmsg, errlen, "cannot read '%s': %s", value, strerror(errno));
		return -EINVAL;
	}
	snprintf(field, size, "%s", value);
	return 0;
}

static int parse_users_key(const char *value, void *field, char *errmsg, size_t errlen)
{
	int r = basic_auth_users_parse(value, field);

	if (r == -E2BIG)
		snprintf(errmsg, errlen, "more than %d users", BASIC_AUTH_USERS_MAX);
	else if (r == -ENAMETOOLONG)
		snprintf(errmsg, errlen, "a user name longer than %d bytes or a hash longer than %d",
			 BASIC_AUTH_NAME_SIZE - 1, BASIC_AUTH_HASH_SIZE - 1);
	else if (r < 0)
		snprintf(errmsg, errlen, "expected space-separated USER:HASH pairs with crypt(3) hashes "
			 "(e.g. from 'mkpasswd -m yescrypt')");
	return r < 0 ? -EINVAL : 0;
}

#define DAEMON struct daemon_config

/* The order is that of daemon_line[]: check_consistency() names lines by index. */
enum { KEY_SAMPLE_INTERVAL = 2, KEY_TLS_CERT_FILE = 12, KEY_TLS_KEY_FILE = 13 };

static const struct config_key daemon_keys[] = {
	CONFIG_KEY_CUSTOM("listen", DAEMON, listen, parse_listen),
	CONFIG_KEY_DURATION("window", DAEMON, window_msec, WINDOW_MSEC_MIN, WINDOW_MSEC_MAX),
	{ .name = "sample_interval", .kind = CONFIG_KEY_DURATION, CONFIG_FIELD(DAEMON, sample_msec),
	  .min = SAMPLE_MSEC_MIN, .max = WINDOW_MSEC_MAX, .max_text = "the window length" },
	{ .name = "history", .kind = CONFIG_KEY_UINT, CONFIG_FIELD(DAEMON, history), .min = HISTORY_MIN,
	  .max = HISTORY_MAX, .what = "a number of windows" },
	CONFIG_KEY_CUSTOM("log_level", DAEMON, log_level, parse_log_level_key),
	CONFIG_KEY_UINT("max_series", DAEMON, max_series, MAX_SERIES_MIN, MAX_SERIES_MAX),
	CONFIG_KEY_UINT("max_connections", DAEMON, max_connections, MAX_CONNECTIONS_MIN, MAX_CONNECTIONS_MAX),
	CONFIG_KEY_DURATION("event_gate", DAEMON, event_gate_msec, 0, EVENT_GATE_MSEC_MAX),
	CONFIG_KEY_UINT("event_history", DAEMON, event_history, EVENT_HISTORY_MIN, EVENT_HISTORY_MAX),
	{ .name = "event_buffer_bytes", .kind = CONFIG_KEY_UINT, CONFIG_FIELD(DAEMON, event_buffer_bytes),
	  .min = EVENT_BUFFER_MIN, .max = EVENT_BUFFER_MAX, .what = "a number of bytes" },
	CONFIG_KEY_BOOL("debug_pause_events", DAEMON, debug_pause_events),
	CONFIG_KEY_BOOL("drop_capabilities", DAEMON, drop_capabilities),
	CONFIG_KEY_CUSTOM("tls_cert_file", DAEMON, tls_cert_file, parse_tls_file),
	CONFIG_KEY_CUSTOM("tls_key_file", DAEMON, tls_key_file, parse_tls_file),
	CONFIG_KEY_CUSTOM("basic_auth_users", DAEMON, basic_auth, parse_users_key),
	CONFIG_KEY_BOOL("debug_perf_buffer", DAEMON, debug_perf_buffer),
	CONFIG_KEY_DURATION("quiet_read_interval", DAEMON, quiet_read_msec, 0, QUIET_READ_MSEC_MAX),
};
_Static_assert(ARRAY_SIZE(daemon_keys) <= ARRAY_SIZE(((struct parse_state *)NULL)->daemon_line),
	       "a daemon key without a daemon_line[] slot");

static int daemon_key(struct parse_state *st, const char *key, const char *value, unsigned line)
{
	const struct config_key *k = config_key_find(daemon_keys, ARRAY_SIZE(daemon_keys), key);
	char msg[384] = "";
	size_t i;

	if (!k) {
		config_error_set(st->err, st->file, line, "daemon", key, "unknown key");
		return -EINVAL;
	}
	i = (size_t)(k - daemon_keys);
	if (st->daemon_seen & (1u << i)) {
		config_error_set(st->err, st->file, line, "daemon", key, "set more than once");
		return -EINVAL;
	}
	st->daemon_seen |= 1u << i;
	st->daemon_line[i] = line;
	if (config_key_parse(k, &st->cfg->daemon, value, msg, sizeof(msg)) < 0) {
		config_error_set(st->err, st->file, line, "daemon", key, "%s", msg);
		return -EINVAL;
	}
	return 0;
}

static const struct config_key events_keys[] = {
	CONFIG_KEY_BOOL("journal", struct events_config, journal),
};

static int events_key(struct parse_state *st, const char *key, const char *value, unsigned line)
{
	const struct config_key *k = config_key_find(events_keys, ARRAY_SIZE(events_keys), key);
	char msg[384] = "";
	size_t i;

	if (!k) {
		config_error_set(st->err, st->file, line, "events", key, "unknown key");
		return -EINVAL;
	}
	i = (size_t)(k - events_keys);
	if (st->events_seen & (1u << i)) {
		config_error_set(st->err, st->file, line, "events", key, "set more than once");
		return -EINVAL;
	}
	st->events_seen |= 1u << i;
	if (config_key_parse(k, &st->cfg->events, value, msg, sizeof(msg)) < 0) {
		config_error_set(st->err, st->file, line, "events", key, "%s", msg);
		return -EINVAL;
	}
	return 0;
}

static int add_collector_section(struct parse_state *st, const char *name, unsigned line)
{
	struct config *c = st->cfg;
	char **names;
	unsigned *lines;
	size_t i;

	for (i = 0; i < c->n_collectors; i++)
		if (strcmp(c->collectors[i], name) == 0)
			return 0;
	names = realloc(c->collectors, (c->n_collectors + 1) * sizeof(*names));
	if (!names)
		return -ENOMEM;
	c->collectors = names;
	lines = realloc(c->collector_lines, (c->n_collectors + 1) * sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	c->collector_lines = lines;
	c->collectors[c->n_collectors] = strdup(name);
	if (!c->collectors[c->n_collectors])
		return -ENOMEM;
	c->collector_lines[c->n_collectors++] = line;
	return 0;
}

static int collector_key(struct parse_state *st, const char *section, const char *name,
			 const char *key, const char *value, unsigned line)
{
	struct config *c = st->cfg;
	struct config_entry *e;
	size_t i;

	for (i = 0; i < c->n_entries; i++)
		if (strcmp(c->entries[i].collector, name) == 0 && strcmp(c->entries[i].key, key) == 0) {
			config_error_set(st->err, st->file, line, section, key,
					 "set more than once (first on line %u)", c->entries[i].line);
			return -EINVAL;
		}
	e = realloc(c->entries, (c->n_entries + 1) * sizeof(*e));
	if (!e)
		return -ENOMEM;
	c->entries = e;
	e = &c->entries[c->n_entries];
	*e = (struct config_entry){ .line = line };
	e->collector = strdup(name);
	e->key = strdup(key);
	e->value = strdup(value);
	c->n_entries++;
	if (!e->collector || !e->key || !e->value)
		return -ENOMEM;
	return 0;
}

static int on_ini_key(void *user, const char *section, const char *key, const char *value)
{
	struct parse_state *st = user;
	unsigned line = st->reader->line;
	int r;

	if (st->r < 0)
		return 0;
	if (!*section) {
		config_error_set(st->err, st->file, line, NULL, NULL, "key '%s' outside of any section", key);
		st->r = -EINVAL;
		return 0;
	}
	if (!value || !*value) {
		config_error_set(st->err, st->file, line, section, key, "empty value");
		st->r = -EINVAL;
		return 0;
	}
	if (strcmp(section, "daemon") == 0) {
		r = daemon_key(st, key, value, line);
	} else if (strcmp(section, "events") == 0) {
		r = events_key(st, key, value, line);
	} else if (strncmp(section, COLLECTOR_PREFIX, strlen(COLLECTOR_PREFIX)) == 0) {
		r = collector_key(st, section, section + strlen(COLLECTOR_PREFIX), key, value, line);
	} else {
		/* Every header is checked as it is read; should one slip past,
		 * never read past the end of its name. */
		config_error_set(st->err, st->file, line, section, NULL,
				 "unknown section (expected [daemon], [events] or [collector.NAME])");
		r = -EINVAL;
	}
	if (r < 0) {
		st->r = r;
		return 0;
	}
	return 1;
}

struct config *config_new_defaults(void)
{
	_cleanup_(config_freep) struct config *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	daemon_config_defaults(&c->daemon);
	events_config_defaults(&c->events);
	c->path = strdup("(built-in defaults)");
	if (!c->path)
		return NULL;
	return TAKE_PTR(c);
}

void config_free(struct config *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->n_entries; i++) {
		free(c->entries[i].collector);
		free(c->entries[i].key);
		free(c->entries[i].value);
	}
	free(c->entries);
	for (i = 0; i < c->n_collectors; i++)
		free(c->collectors[i]);
	free(c->collectors);
	free(c->collector_lines);
	free(c->path);
	free(c);
}

static int section_header(struct parse_state *st, const char *name, unsigned line)
{
	if (strcmp(name, "daemon") == 0 || strcmp(name, "events") == 0)
		return 0;
	if (strncmp(name, COLLECTOR_PREFIX, strlen(COLLECTOR_PREFIX)) == 0 && name[strlen(COLLECTOR_PREFIX)])
		return add_collector_section(st, name + strlen(COLLECTOR_PREFIX), line);
	config_error_set(st->err, st->file, line, name, NULL,
			 "unknown section (expected [daemon], [events] or [collector.NAME])");
	return -EINVAL;
}

static char *reader_next(char *buf, int size, void *stream)
{
	struct parse_state *st = stream;
	struct line_reader *rd = st->reader;
	size_t n = 0, cap = (size_t)size;
	const char *p;
	int c;

	if (st->r < 0)
		return NULL;
	if (rd->file) {
		while ((c = fgetc(rd->file)) != EOF) {
			if (n + 1 < cap)
				buf[n] = (char)c;
			n++;
			if (c == '\n')
				break;
		}
		/* A read error (EIO, or EISDIR for a directory) is not an end of file. */
		if (ferror(rd->file)) {
			config_error_set(st->err, st->file, 0, NULL, NULL, "cannot read: %s", strerror(errno));
			st->r = -EIO;
			return NULL;
		}
		if (n == 0)
			return NULL;
	} else {
		if (!*rd->text)
			return NULL;
		for (p = rd->text; *p; p++) {
			if (n + 1 < cap)
				buf[n] = *p;
			n++;
			if (*p == '\n') {
				p++;
				break;
			}
		}
		rd->text = p;
	}
	rd->line++;
	if (n + 1 > cap) {
		config_error_set(st->err, st->file, rd->line, NULL, NULL,
				 "line longer than %d characters", size - 2);
		st->r = -EINVAL;
		return NULL;
	}
	buf[n] = '\0';
	/* Section headers: inih validates none of them and we want every one checked. */
	p = buf;
	if (rd->line == 1 && strncmp(p, "\xef\xbb\xbf", 3) == 0) /* inih skips a UTF-8 BOM */
		p += 3;
	/* The blanks inih's lskip() skips (isspace(), so '\v', '\f' and '\r'
	 * too): a header it sees, we must check. */
	for (; isspace((unsigned char)*p); p++)
		;
	if (*p == '[') {
		const char *end = strchr(p, ']');

		if (end && (size_t)(end - p - 1) > INI_SECTION_MAX) {
			config_error_set(st->err, st->file, rd->line, NULL, NULL,
					 "section name longer than %d characters", INI_SECTION_MAX);
			st->r = -EINVAL;
			return NULL;
		}
		if (end) {
			memcpy(rd->section, p + 1, (size_t)(end - p - 1));
			rd->section[end - p - 1] = '\0';
			st->r = section_header(st, rd->section, rd->line);
			if (st->r < 0)
				return NULL;
		}
	}
	return buf;
}

static int check_consistency(struct parse_state *st)
{
	struct config *c = st->cfg;

	/* Only a sample_interval from the file can exceed the window: the
	 * default (100ms) is the smallest window allowed. */
	if (c->daemon.sample_msec > c->daemon.window_msec) {
		config_error_set(st->err, st->file, st->daemon_line[KEY_SAMPLE_INTERVAL], "daemon", "sample_interval",
				 "%ums is longer than the window (%ums)", c->daemon.sample_msec,
				 c->daemon.window_msec);
		return -EINVAL;
	}
	if (!c->daemon.tls_cert_file[0] != !c->daemon.tls_key_file[0]) {
		bool has_cert = c->daemon.tls_cert_file[0];

		config_error_set(st->err, st->file, st->daemon_line[has_cert ? KEY_TLS_CERT_FILE : KEY_TLS_KEY_FILE],
				 "daemon", has_cert ? "tls_cert_file" : "tls_key_file",
				 "TLS needs both tls_cert_file and tls_key_file");
		return -EINVAL;
	}
	return 0;
}

static int finish(struct parse_state *st, int ini_r, struct config **ret)
{
	/* inih reads on after a syntax error and we stop at our first error
	 * (reader->line is still its line): report whichever came first. */
	if (ini_r > 0 && (st->r == 0 || (st->r == -EINVAL && (unsigned)ini_r < st->reader->line))) {
		config_error_set(st->err, st->file, (unsigned)ini_r, NULL, NULL,
				 "syntax error (expected [section] or key = value)");
		st->r = -EINVAL;
	} else if (st->r == 0 && ini_r < 0) {
		config_error_set(st->err, st->file, 0, NULL, NULL, "cannot read: %s",
				 ini_r == -2 ? "out of memory" : strerror(errno));
		st->r = ini_r == -2 ? -ENOMEM : -EIO;
	}
	if (st->r == 0)
		st->r = check_consistency(st);
	if (st->r < 0) {
		config_free(st->cfg);
		return st->r;
	}
	*ret = st->cfg;
	return 0;
}

static struct config *config_new_named(const char *name)
{
	_cleanup_(config_freep) struct config *c = config_new_defaults();

	if (!c)
		return NULL;
	free(c->path);
	c->path = strdup(name);
	if (!c->path)
		return NULL;
	return TAKE_PTR(c);
}

int config_load(const char *path, bool missing_ok, struct config **ret, struct config_error *err)
{
	struct line_reader rd = { 0 };
	struct parse_state st = { .reader = &rd, .file = path, .err = err };
	_cleanup_fclose_ FILE *f = NULL;
	int ini_r;

	f = fopen(path, "re");
	if (!f) {
		int e = errno;

		if (e == ENOENT && missing_ok) {
			*ret = config_new_defaults();
			return *ret ? 0 : -ENOMEM;
		}
		config_error_set(err, path, 0, NULL, NULL, "cannot open: %s", strerror(e));
		return -e;
	}
	st.cfg = config_new_named(path);
	if (!st.cfg)
		return -ENOMEM;
	rd.file = f;
	ini_r = ini_parse_stream(reader_next, &st, on_ini_key, &st);
	return finish(&st, ini_r, ret);
}

int config_load_string(const char *text, const char *name, struct config **ret, struct config_error *err)
{
	struct line_reader rd = { .text = text };
	struct parse_state st = { .reader = &rd, .file = name, .err = err };
	int ini_r;

	st.cfg = config_new_named(name);
	if (!st.cfg)
		return -ENOMEM;
	ini_r = ini_parse_stream(reader_next, &st, on_ini_key, &st);
	return finish(&st, ini_r, ret);
}
