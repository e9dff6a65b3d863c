/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCHD_LOG_H
#define MEMWATCHD_LOG_H

#include <errno.h>
#include <stdbool.h>
#include <syslog.h>
#include "macro.h"

/* stderr with "<N>" priority prefixes, which journald turns into priorities. */
void log_set_max_level(int level);
int log_get_max_level(void);
/* While probing attach flavours, libbpf's failures are expected: demote them to debug. */
void log_set_libbpf_quiet(bool quiet);
void log_setup_libbpf(void);

/* Returns -abs(error) so callers can "return log_error_errno(r, ...)". %m prints error. */
int log_internal(int level, int error, const char *fmt, ...) _printf_(3, 4);

#define log_full_errno(level, error, ...) log_internal(level, error, __VA_ARGS__)
#define log_debug(...) log_internal(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...) log_internal(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...) log_internal(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...) log_internal(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...) log_internal(LOG_ERR, 0, __VA_ARGS__)
#define log_warning_errno(error, ...) log_internal(LOG_WARNING, error, __VA_ARGS__)
#define log_error_errno(error, ...) log_internal(LOG_ERR, error, __VA_ARGS__)
#define log_debug_errno(error, ...) log_internal(LOG_DEBUG, error, __VA_ARGS__)

#endif
