// SPDX-License-Identifier: GPL-2.0
/* Config file text -> the config front-end, both ways in: config_load() on a
 * file (a memfd) and config_load_string(). They must agree, and a loaded
 * config must hold only values within the documented bounds. */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>
#include "config.h"
#include "fuzz.h"
#include "netaddr.h"

static int memfd = -1;
static char memfd_path[64];

static void check_config(const struct config *c)
{
	const struct daemon_config *d = &c->daemon;
	struct listen_addr a;
	size_t i, j;

	FUZZ_CHECK(d->window_msec >= WINDOW_MSEC_MIN && d->window_msec <= WINDOW_MSEC_MAX);
	FUZZ_CHECK(d->sample_msec >= SAMPLE_MSEC_MIN && d->sample_msec <= d->window_msec);
	FUZZ_CHECK(d->history >= HISTORY_MIN && d->history <= HISTORY_MAX);
	FUZZ_CHECK(d->max_series >= MAX_SERIES_MIN && d->max_series <= MAX_SERIES_MAX);
	FUZZ_CHECK(d->max_connections >= MAX_CONNECTIONS_MIN && d->max_connections <= MAX_CONNECTIONS_MAX);
	FUZZ_CHECK(d->event_gate_msec <= EVENT_GATE_MSEC_MAX);
	FUZZ_CHECK(d->event_history >= EVENT_HISTORY_MIN && d->event_history <= EVENT_HISTORY_MAX);
	FUZZ_CHECK(d->event_buffer_bytes >= EVENT_BUFFER_MIN && d->event_buffer_bytes <= EVENT_BUFFER_MAX);
	FUZZ_CHECK(d->log_level >= 3 && d->log_level <= 7);
	FUZZ_CHECK(fuzz_terminated(d->listen, sizeof(d->listen)));
	FUZZ_CHECK(listen_addr_parse(d->listen, &a) == 0);
	FUZZ_CHECK(d->basic_auth.n <= BASIC_AUTH_USERS_MAX);
	for (i = 0; i < d->basic_auth.n; i++) {
		FUZZ_CHECK(fuzz_terminated(d->basic_auth.user[i].name, sizeof(d->basic_auth.user[i].name)));
		FUZZ_CHECK(fuzz_terminated(d->basic_auth.user[i].hash, sizeof(d->basic_auth.user[i].hash)));
		FUZZ_CHECK(d->basic_auth.user[i].name[0] && d->basic_auth.user[i].hash[0] == '$');
	}
	FUZZ_CHECK(!d->tls_cert_file[0] == !d->tls_key_file[0]);
	/* Every collector key belongs to a [collector.NAME] section that was seen. */
	for (i = 0; i < c->n_entries; i++) {
		bool seen = false;

		FUZZ_CHECK(c->entries[i].collector && c->entries[i].key && c->entries[i].value);
		for (j = 0; j < c->n_collectors; j++)
			seen = seen || strcmp(c->collectors[j], c->entries[i].collector) == 0;
		FUZZ_CHECK(seen);
	}
}

static bool same_config(const struct config *a, const struct config *b)
{
	size_t i;

	if (memcmp(&a->daemon, &b->daemon, sizeof(a->daemon)) != 0 || a->n_entries != b->n_entries ||
	    a->n_collectors != b->n_collectors)
		return false;
	for (i = 0; i < a->n_entries; i++)
		if (strcmp(a->entries[i].collector, b->entries[i].collector) != 0 ||
		    strcmp(a->entries[i].key, b->entries[i].key) != 0 ||
		    strcmp(a->entries[i].value, b->entries[i].value) != 0 || a->entries[i].line != b->entries[i].line)
			return false;
	for (i = 0; i < a->n_collectors; i++)
		if (strcmp(a->collectors[i], b->collectors[i]) != 0)
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config *from_string = NULL, *from_file = NULL;
	struct config_error es = { "" }, ef = { "" };
	char *text = fuzz_cstring(data, size);
	int rs, rf;

	if (memfd < 0) {
		memfd = memfd_create("fuzz-config", MFD_CLOEXEC);
		FUZZ_CHECK(memfd >= 0);
		snprintf(memfd_path, sizeof(memfd_path), "/proc/self/fd/%d", memfd);
	}
	rs = config_load_string(text, memfd_path, &from_string, &es);
	FUZZ_CHECK(rs == 0 || rs == -EINVAL || rs == -ENOMEM);
	if (rs == 0)
		check_config(from_string);
	else
		FUZZ_CHECK(fuzz_terminated(es.message, sizeof(es.message)) &&
			   strncmp(es.message, memfd_path, strlen(memfd_path)) == 0);

	FUZZ_CHECK(ftruncate(memfd, 0) == 0);
	FUZZ_CHECK(pwrite(memfd, data, size, 0) == (ssize_t)size);
	rf = config_load(memfd_path, false, &from_file, &ef);
	/* The file reader sees past a NUL byte, the string one cannot. */
	if (!memchr(data, '\0', size)) {
		if (rs != rf || (rs == 0 && !same_config(from_string, from_file)) ||
		    (rs < 0 && strcmp(es.message, ef.message) != 0)) {
			fprintf(stderr, "string: %d %s\nfile:   %d %s\n", rs, es.message, rf, ef.message);
			FUZZ_CHECK(!"config_load() and config_load_string() disagree");
		}
	}
	if (rf == 0)
		check_config(from_file);
	config_free(from_string);
	config_free(from_file);
	free(text);
	return 0;
}
