// SPDX-License-Identifier: GPL-2.0
#include <bpf/libbpf.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "log.h"

static atomic_int max_level = LOG_INFO;
static atomic_bool libbpf_quiet;

void log_set_max_level(int level)
{
	atomic_store(&max_level, level);
}

int log_get_max_level(void)
{
	return atomic_load(&max_level);
}

void log_set_libbpf_quiet(bool quiet)
{
	atomic_store(&libbpf_quiet, quiet);
}

static void log_write(int level, const char *text)
{
	/* One fprintf per line keeps lines from two threads from interleaving. */
	const char *line = text, *nl;

	do {
		nl = strchr(line, '\n');
		if (nl) {
			if (nl > line)
				fprintf(stderr, "<%d>%.*s\n", level, (int)(nl - line), line);
			line = nl + 1;
		} else if (*line) {
			fprintf(stderr, "<%d>%s\n", level, line);
		}
	} while (nl && *line);
}

int log_internal(int level, int error, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	if (error < 0)
		error = -error;
	if (level <= atomic_load(&max_level)) {
		int saved = errno;

		errno = error; /* for %m */
		va_start(ap, fmt);
		vsnprintf(buf, sizeof(buf), fmt, ap);
		va_end(ap);
		errno = saved;
		log_write(level, buf);
	}
	return -error;
}

static int libbpf_print(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	char *buf = NULL;
	int level;

	switch (lvl) {
	case LIBBPF_WARN:
		level = atomic_load(&libbpf_quiet) ? LOG_DEBUG : LOG_WARNING;
		break;
	case LIBBPF_INFO:
		level = LOG_DEBUG; /* libbpf's info is chatter for an operator */
		break;
	default:
		level = LOG_DEBUG;
		break;
	}
	if (level > atomic_load(&max_level))
		return 0;
	/* Verifier logs run to many kilobytes: no fixed buffer. */
	if (vasprintf(&buf, fmt, ap) < 0)
		return 0;
	log_write(level, buf);
	free(buf);
	return 0;
}

void log_setup_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
