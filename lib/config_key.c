// SPDX-License-Identifier: GPL-2.0
/* The interpreter of configuration key tables (struct config_key in config.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "config.h"

/* "0", "250ms", "60s", "1h": as the bounds of durations are written. */
static void format_msec(uint64_t msec, char *buf, size_t len)
{
	if (msec == 0)
		snprintf(buf, len, "0");
	else if (msec % 3600000 == 0)
		snprintf(buf, len, "%" PRIu64 "h", msec / 3600000);
	else if (msec % 1000 == 0)
		snprintf(buf, len, "%" PRIu64 "s", msec / 1000);
	else
		snprintf(buf, len, "%" PRIu64 "ms", msec);
}

static void store_uint(void *field, size_t size, uint64_t v)
{
	if (size == sizeof(uint32_t)) {
		uint32_t v32 = (uint32_t)v;

		memcpy(field, &v32, sizeof(v32));
	} else {
		memcpy(field, &v, sizeof(v));
	}
}

static int parse_choice(const struct config_key *key, const char *value, int *ret, char *errmsg, size_t errlen)
{
	size_t n = 0;

	for (const struct config_choice *c = key->choices; c->name; c++)
		if (strcmp(value, c->name) == 0) {
			*ret = c->value;
			return 0;
		}
	n = (size_t)snprintf(errmsg, errlen, "'%s' is not one of ", value);
	for (const struct config_choice *c = key->choices; c->name && n < errlen; c++)
		n += (size_t)snprintf(errmsg + n, errlen - n, "%s%s", c == key->choices ? "" : ", ", c->name);
	return -EINVAL;
}

const struct config_key *config_key_find(const struct config_key *keys, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

/* UINT and DURATION: a uint32_t or uint64_t field. */
static int parse_number(const struct config_key *key, void *field, const char *value, char *errmsg, size_t errlen)
{
	bool duration = key->kind == CONFIG_KEY_DURATION;
	char lo[32], hi[32];
	uint64_t v;
	int r;

	r = duration ? config_parse_duration_msec(value, key->min, key->max, &v) :
		       config_parse_uint(value, key->min, key->max, &v);
	if (r < 0) {
		if (duration) {
			format_msec(key->min, lo, sizeof(lo));
			format_msec(key->max, hi, sizeof(hi));
		} else {
			snprintf(lo, sizeof(lo), "%" PRIu64, key->min);
			snprintf(hi, sizeof(hi), "%" PRIu64, key->max);
		}
		snprintf(errmsg, errlen, "'%s' is not %s between %s and %s", value,
			 key->what ? key->what : duration ? "a duration" : "a number", lo,
			 key->max_text ? key->max_text : hi);
		return r;
	}
	store_uint(field, key->size, v);
	return 0;
}

/* Passes a parser's result r on; when it failed, errmsg says what value is not. */
static int explain_failure(int r, const char *value, const char *what, char *errmsg, size_t errlen)
{
	if (r < 0)
		snprintf(errmsg, errlen, "'%s' is not %s", value, what);
	return r;
}

int config_key_parse(const struct config_key *key, void *cfg, const char *value, char *errmsg, size_t errlen)
{
	void *field = (char *)cfg + key->offset;
	int r, choice;

	switch (key->kind) {
	case CONFIG_KEY_BOOL:
		return explain_failure(config_parse_bool(value, field), value,
				       "a boolean (yes/no, true/false, on/off, 1/0)", errmsg, errlen);
	case CONFIG_KEY_UINT:
	case CONFIG_KEY_DURATION:
		return parse_number(key, field, value, errmsg, errlen);
	case CONFIG_KEY_PERCENT:
		return explain_failure(config_parse_percent(value, field), value, "a percentage from 0 to 100 (e.g. 2%)",
				       errmsg, errlen);
	case CONFIG_KEY_PATH:
		return config_parse_path(value, field, key->size, errmsg, errlen);
	case CONFIG_KEY_CHOICE:
		if (key->size != sizeof(choice))
			return -EINVAL; /* a table that names a field of another size */
		r = parse_choice(key, value, &choice, errmsg, errlen);
		if (r == 0)
			memcpy(field, &choice, sizeof(choice));
		return r;
	case CONFIG_KEY_CUSTOM:
		return key->parse(value, field, errmsg, errlen);
	}
	return -EINVAL;
}

int config_key_apply(const struct config_key *keys, size_t n, void *cfg, const char *name, const char *value,
		     char *errmsg, size_t errlen)
{
	const struct config_key *key = config_key_find(keys, n, name);

	return key ? config_key_parse(key, cfg, value, errmsg, errlen) : -ENOENT;
}
