// SPDX-License-Identifier: GPL-2.0
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "fileio.h"
#include "vmstat_source.h"

#define PROC_FILE_MAX (1 << 20)

enum source_kind { SOURCE_VMSTAT, SOURCE_MEMINFO };

struct vmstat_source {
	struct vmstat_sources *set;
	struct vmstat_source *next;
	enum source_kind kind;
	char *path;
	unsigned refs;
	struct procfile file;
	uint64_t window; /* of table and result; 0: never read */
	int result;
	union {
		struct vmstat vmstat;
		struct meminfo meminfo;
	} table;
	uint64_t reads;
};

struct vmstat_sources {
	/* Few entries (one per distinct path in the configuration): a list will do. */
	struct vmstat_source *list;
	uint64_t window;
};

int vmstat_sources_new(struct vmstat_sources **ret)
{
	struct vmstat_sources *set = calloc(1, sizeof(*set));

	if (!set)
		return -ENOMEM;
	set->window = 1;
	*ret = set;
	return 0;
}

void vmstat_sources_free(struct vmstat_sources *set)
{
	free(set);
}

void vmstat_sources_next_window(struct vmstat_sources *set)
{
	set->window++;
}

static int source_open(struct vmstat_sources *set, enum source_kind kind, const char *path,
		       struct vmstat_source **ret)
{
	struct vmstat_source *src;
	int r;

	if (!set)
		return -ENOMEM;
	for (src = set->list; src; src = src->next)
		if (src->kind == kind && strcmp(src->path, path) == 0) {
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
	/* meminfo_proc_show() is one seq_file record; /proc/vmstat a record a line. */
	r = kind == SOURCE_MEMINFO ? procfile_open_whole(&src->file, path, PROC_FILE_MAX)
				   : procfile_open(&src->file, path, PROC_FILE_MAX);
	if (r < 0) {
		free(src->path);
		free(src);
		return r;
	}
	src->set = set;
	src->kind = kind;
	src->refs = 1;
	src->next = set->list;
	set->list = src;
	*ret = src;
	return 0;
}

void vmstat_source_unref(struct vmstat_source *src)
{
	struct vmstat_source **p;

	if (!src || --src->refs > 0)
		return;
	for (p = &src->set->list; *p; p = &(*p)->next)
		if (*p == src) {
			*p = src->next;
			break;
		}
	procfile_close(&src->file);
	free(src->path);
	free(src);
}

int vmstat_source_open(struct vmstat_sources *set, const char *path, struct vmstat_source **ret)
{
	return source_open(set, SOURCE_VMSTAT, path, ret);
}

int meminfo_source_open(struct vmstat_sources *set, const char *path, struct vmstat_source **ret)
{
	return source_open(set, SOURCE_MEMINFO, path, ret);
}

static int source_get(struct vmstat_source *src)
{
	if (src->window != src->set->window) {
		const char *data;
		size_t len;

		src->window = src->set->window;
		src->reads++;
		src->result = procfile_read(&src->file, &data, &len);
		if (src->result == 0)
			src->result = src->kind == SOURCE_MEMINFO ? meminfo_parse(data, len, &src->table.meminfo)
								  : vmstat_parse(data, len, &src->table.vmstat);
	}
	return src->result;
}

int vmstat_source_get(struct vmstat_source *src, const struct vmstat **ret)
{
	int r;

	assert(src->kind == SOURCE_VMSTAT);
	r = source_get(src);
	if (r < 0)
		return r;
	*ret = &src->table.vmstat;
	return 0;
}

int meminfo_source_get(struct vmstat_source *src, const struct meminfo **ret)
{
	int r;

	assert(src->kind == SOURCE_MEMINFO);
	r = source_get(src);
	if (r < 0)
		return r;
	*ret = &src->table.meminfo;
	return 0;
}

uint64_t vmstat_source_reads(const struct vmstat_source *src)
{
	return src->reads;
}
