// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "fileio.h"
#include "vmstat_source.h"

#define VMSTAT_FILE_MAX (1 << 20)

struct vmstat_source {
	struct vmstat_source *next;
	char *path;
	unsigned refs;
	struct procfile file;
	uint64_t window; /* of table and result; 0: never read */
	int result;
	struct vmstat table;
	uint64_t reads;
};

/* Few entries (one per distinct path in the configuration): a list will do. */
static struct vmstat_source *sources;
static uint64_t current_window = 1;

int vmstat_source_open(const char *path, struct vmstat_source **ret)
{
	struct vmstat_source *src;
	int r;

	for (src = sources; src; src = src->next)
		if (strcmp(src->path, path) == 0) {
			src->refs++;
			*ret = src;
			return 0;
		}
	src = calloc(1, sizeof(*src));
	if (!src)
		return -ENOMEM;
	src->path = strdup(path);
	if (!src->path) {
		free(src);
		return -ENOMEM;
	}
	r = procfile_open(&src->file, path, VMSTAT_FILE_MAX);
	if (r < 0) {
		free(src->path);
		free(src);
		return r;
	}
	src->refs = 1;
	src->next = sources;
	sources = src;
	*ret = src;
	return 0;
}

void vmstat_source_unref(struct vmstat_source *src)
{
	struct vmstat_source **p;

	if (!src || --src->refs > 0)
		return;
	for (p = &sources; *p; p = &(*p)->next)
		if (*p == src) {
			*p = src->next;
			break;
		}
	procfile_close(&src->file);
	free(src->path);
	free(src);
}

int vmstat_source_get(struct vmstat_source *src, const struct vmstat **ret)
{
	if (src->window != current_window) {
		const char *data;
		size_t len;

		src->window = current_window;
		src->reads++;
		src->result = procfile_read(&src->file, &data, &len);
		if (src->result == 0)
			src->result = vmstat_parse(data, len, &src->table);
	}
	if (src->result < 0)
		return src->result;
	*ret = &src->table;
	return 0;
}

void vmstat_sources_next_window(void)
{
	current_window++;
}

uint64_t vmstat_source_reads(const struct vmstat_source *src)
{
	return src->reads;
}
