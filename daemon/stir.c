// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpf_attach.h"
#include "log.h"
#include "stir.h"

#define STIR_MAP_NAME "stir"

struct stir {
	struct ring_buffer *rb;
};

static int ignore_record(void *ctx, void *data, size_t size)
{
	return 0;
}

struct stir *stir_new(struct bpf_shared_maps *shared)
{
	long page = sysconf(_SC_PAGESIZE);
	struct stir *s;
	int fd, r;

	/* The smallest ring the kernel takes: one page. */
	fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, STIR_MAP_NAME, 0, 0, (__u32)(page > 0 ? page : 4096), NULL);
	if (fd < 0) {
		log_warning_errno(-errno, "Cannot create the stir ring buffer (%m): a window that goes on is checked at each window length");
		return NULL;
	}
	r = bpf_shared_map_add(shared, STIR_MAP_NAME, fd);
	if (r < 0) {
		close(fd);
		log_warning_errno(r, "Cannot share the stir ring buffer (%m): a window that goes on is checked at each window length");
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s)
		s->rb = ring_buffer__new(fd, ignore_record, NULL, NULL);
	if (!s || !s->rb) {
		log_warning("Cannot read the stir ring buffer: a window that goes on is checked at each window length");
		free(s);
		return NULL;
	}
	return s;
}

void stir_free(struct stir *s)
{
	if (!s)
		return;
	ring_buffer__free(s->rb);
	free(s);
}

int stir_fd(const struct stir *s)
{
	return s ? ring_buffer__epoll_fd(s->rb) : -1;
}

void stir_drain(struct stir *s)
{
	if (s)
		(void)ring_buffer__consume(s->rb);
}
