// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fileio.h"
#include "macro.h"

ssize_t pread_retrying(int fd, void *buf, size_t n, off_t offset)
{
	ssize_t r;

	do
		r = pread(fd, buf, n, offset);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

int procfile_open(struct procfile *pf, const char *path, size_t max)
{
	*pf = (struct procfile){ .fd = -1, .max = max };
	pf->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (pf->fd < 0)
		return -errno;
	return 0;
}

int procfile_open_whole(struct procfile *pf, const char *path, size_t max)
{
	int r = procfile_open(pf, path, max);

	pf->whole_reads = true;
	return r;
}

int procfile_read(struct procfile *pf, const char **data, size_t *len)
{
	size_t cap = pf->cap ? pf->cap : 4096;

	if (pf->fd < 0)
		return -EBADF;
	for (;;) {
		ssize_t n;
		size_t got = 0;

		if (cap > pf->cap) {
			char *b = realloc(pf->buf, cap);

			if (!b)
				return -ENOMEM;
			pf->buf = b;
			pf->cap = cap;
		}
		/* seq_file may hand out the text in pieces; read until EOF or the buffer is full. */
		for (;;) {
			n = pread_retrying(pf->fd, pf->buf + got, pf->cap - 1 - got, (off_t)got);
			if (n < 0)
				return (int)n;
			if (n == 0)
				break;
			got += (size_t)n;
			if (got == pf->cap - 1 || pf->whole_reads)
				break;
		}
		if (got < pf->cap - 1) {
			pf->buf[got] = '\0';
			*data = pf->buf;
			*len = got;
			return 0;
		}
		if (pf->cap >= pf->max)
			return -EFBIG;
		cap = pf->cap * 2 > pf->max ? pf->max : pf->cap * 2;
	}
}

void procfile_close(struct procfile *pf)
{
	if (pf->fd >= 0)
		close(pf->fd);
	free(pf->buf);
	*pf = (struct procfile){ .fd = -1 };
}

int read_full_file(const char *path, size_t max, char **ret, size_t *ret_len)
{
	struct procfile pf;
	const char *data;
	size_t len;
	char *copy;
	int r;

	r = procfile_open(&pf, path, max);
	if (r < 0)
		return r;
	r = procfile_read(&pf, &data, &len);
	if (r < 0) {
		procfile_close(&pf);
		return r;
	}
	copy = pf.buf; /* data == pf.buf; hand the buffer over */
	pf.buf = NULL;
	procfile_close(&pf);
	*ret = copy;
	if (ret_len)
		*ret_len = len;
	return 0;
}
