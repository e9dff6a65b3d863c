// SPDX-License-Identifier: GPL-2.0
/* The collectors' settings: each [collector.NAME] section checked against
 * that collector's own keys, over its defaults (core.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core.h"

static const struct collector_ops *collector_by_name(const char *name, size_t *index)
{
	size_t i;

	for (i = 0; i < n_all_collectors; i++)
		if (strcmp(all_collectors[i]->name, name) == 0) {
			*index = i;
			return all_collectors[i];
		}
	return NULL;
}

void collector_settings_free(struct collector_settings *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < n_all_collectors; i++)
		free(s[i].cfg);
	free(s);
}

static const struct collector_key *collector_key(const struct collector_ops *ops, const char *name)
{
	for (size_t k = 0; k < ops->n_keys; k++)
		if (strcmp(ops->keys[k].key.name, name) == 0)
			return &ops->keys[k];
	return NULL;
}

/* Every default of ops through its key's own parser: one it refuses is a bug
 * in the table, said as any bad value is. */
static int collector_defaults(const struct collector_ops *ops, void *cfg, struct config_error *err)
{
	for (size_t k = 0; k < ops->n_keys; k++) {
		const struct collector_key *key = &ops->keys[k];
		char section[160], msg[256] = "";

		if (!key->def || config_key_parse(&key->key, cfg, key->def, msg, sizeof(msg)) == 0)
			continue;
		snprintf(section, sizeof(section), "collector.%s", ops->name);
		config_error_set(err, "(built-in defaults)", 0, section, key->key.name, "%s",
				 msg[0] ? msg : "invalid value");
		return -EINVAL;
	}
	return 0;
}

int collector_settings_build(const struct config *c, struct collector_settings **ret,
			     struct config_error *err)
{
	_cleanup_(collector_settings_freep) struct collector_settings *s = NULL;
	size_t i, idx = 0;
	int r;

	s = calloc(n_all_collectors, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (i = 0; i < n_all_collectors; i++) {
		const struct collector_ops *ops = all_collectors[i];

		s[i].enabled = ops->default_enabled;
		s[i].cfg = calloc(1, ops->config_size ? ops->config_size : 1);
		if (!s[i].cfg)
			return -ENOMEM;
		r = collector_defaults(ops, s[i].cfg, err);
		if (r < 0)
			return r;
	}
	for (i = 0; i < c->n_collectors; i++) {
		if (!collector_by_name(c->collectors[i], &idx)) {
			char section[160];

			snprintf(section, sizeof(section), "collector.%s", c->collectors[i]);
			config_error_set(err, c->path, c->collector_lines[i], section, NULL,
					 "unknown collector '%s'", c->collectors[i]);
			return -EINVAL;
		}
	}
	for (i = 0; i < c->n_entries; i++) {
		const struct config_entry *e = &c->entries[i];
		const struct collector_ops *ops = collector_by_name(e->collector, &idx);
		const struct collector_key *key;
		char section[160], msg[256] = "";

		snprintf(section, sizeof(section), "collector.%s", e->collector);
		if (strcmp(e->key, "enabled") == 0) {
			if (config_parse_bool(e->value, &s[idx].enabled) < 0) {
				config_error_set(err, c->path, e->line, section, e->key,
						 "'%s' is not a boolean (yes/no, true/false, on/off, 1/0)", e->value);
				return -EINVAL;
			}
			continue;
		}
		key = collector_key(ops, e->key);
		if (!key) {
			config_error_set(err, c->path, e->line, section, e->key, "unknown key");
			return -EINVAL;
		}
		if (config_key_parse(&key->key, s[idx].cfg, e->value, msg, sizeof(msg)) < 0) {
			config_error_set(err, c->path, e->line, section, e->key, "%s",
					 msg[0] ? msg : "invalid value");
			return -EINVAL;
		}
	}
	*ret = TAKE_PTR(s);
	return 0;
}

