/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_FILEIO_H
#define MEMWATCH_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* A /proc or cgroupfs file kept open and re-read with pread() from offset 0:
 * seq_file regenerates the text on each read, and we save open+close on
 * every sample. */
struct procfile {
	int fd;
	char *buf;
	size_t cap;
	size_t max; /* refuse files larger than this */
	/* Each read hands out the whole text (a single_open seq_file such as
	 * /proc/meminfo or /proc/pressure/memory, or a regular file): a read
	 * short of the buffer is the end, with no second read to find it. Not
	 * for multi-record seq_files such as /proc/vmstat, whose reads stop at
	 * a page. */
	bool whole_reads;
};

/* pread(), retried on EINTR; the count or -errno. */
ssize_t pread_retrying(int fd, void *buf, size_t n, off_t offset);

int procfile_open(struct procfile *pf, const char *path, size_t max);
/* procfile_open() for a file each read hands out whole (whole_reads). */
int procfile_open_whole(struct procfile *pf, const char *path, size_t max);
/* On success *data points into pf's buffer, NUL-terminated, valid until the next read. */
int procfile_read(struct procfile *pf, const char **data, size_t *len);
void procfile_close(struct procfile *pf);

/* Reads a whole file (at most max bytes) into a new NUL-terminated buffer. */
int read_full_file(const char *path, size_t max, char **ret, size_t *ret_len);

#endif
