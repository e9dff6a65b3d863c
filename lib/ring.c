// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include "ring.h"

struct snapshot_ring {
	pthread_mutex_t lock;
	struct snapshot **slots;
	size_t capacity;
	size_t head;  /* next slot to write */
	size_t count;
};

struct snapshot_ring *snapshot_ring_new(size_t capacity)
{
	_cleanup_(snapshot_ring_freep) struct snapshot_ring *ring = NULL;

	if (capacity == 0)
		return NULL;
	ring = calloc(1, sizeof(*ring));
	if (!ring)
		return NULL;
	pthread_mutex_init(&ring->lock, NULL);
	ring->slots = calloc(capacity, sizeof(*ring->slots));
	if (!ring->slots)
		return NULL;
	ring->capacity = capacity;
	return TAKE_PTR(ring);
}

void snapshot_ring_free(struct snapshot_ring *ring)
{
	size_t i;

	if (!ring)
		return;
	for (i = 0; i < ring->capacity; i++)
		snapshot_unref(ring->slots[i]);
	free(ring->slots);
	pthread_mutex_destroy(&ring->lock);
	free(ring);
}

/* At most this many windows' bodies are handed over per publish; the rest wait for the next. */
#define TRIM_BATCH 8

void snapshot_ring_publish(struct snapshot_ring *ring, struct snapshot *s)
{
	void *trimmed[TRIM_BATCH * SNAPSHOT_TRIM_BLOCKS];
	struct snapshot *evicted;
	size_t n = 0, windows = 0, i;

	pthread_mutex_lock(&ring->lock);
	evicted = ring->slots[ring->head];
	ring->slots[ring->head] = s;
	ring->head = (ring->head + 1) % ring->capacity;
	if (ring->count < ring->capacity)
		ring->count++;
	/* Only the newest window's bodies are served, so the older ones drop
	 * theirs once the ring holds their only reference. References are only taken
	 * from the ring under this lock or copied from one already held (a
	 * scrape's response keeps its own until sent), so a count of 1 cannot
	 * rise while we look. A busy one is retried at the next publish. */
	for (i = 1; i < ring->count && windows < TRIM_BATCH; i++) {
		size_t got = snapshot_trim(ring->slots[(ring->head + ring->capacity - 1 - i) % ring->capacity],
					   trimmed + n);

		n += got;
		windows += got > 0;
	}
	pthread_mutex_unlock(&ring->lock);
	for (i = 0; i < n; i++)
		free(trimmed[i]);
	/* A reader may still hold the evicted one; the last unref frees it. */
	snapshot_unref(evicted);
}

struct snapshot *snapshot_ring_latest(struct snapshot_ring *ring)
{
	struct snapshot *s = NULL;

	pthread_mutex_lock(&ring->lock);
	if (ring->count)
		s = snapshot_ref(ring->slots[(ring->head + ring->capacity - 1) % ring->capacity]);
	pthread_mutex_unlock(&ring->lock);
	return s;
}

size_t snapshot_ring_recent(struct snapshot_ring *ring, struct snapshot **out, size_t max)
{
	size_t n, i, start;

	pthread_mutex_lock(&ring->lock);
	n = ring->count < max ? ring->count : max;
	start = (ring->head + ring->capacity - n) % ring->capacity;
	for (i = 0; i < n; i++)
		out[i] = snapshot_ref(ring->slots[(start + i) % ring->capacity]);
	pthread_mutex_unlock(&ring->lock);
	return n;
}

int snapshot_ring_resize(struct snapshot_ring *ring, size_t capacity)
{
	struct snapshot **slots, **old;
	size_t keep, i, old_cap, start;

	if (capacity == 0)
		return -EINVAL;
	slots = calloc(capacity, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	pthread_mutex_lock(&ring->lock);
	keep = ring->count < capacity ? ring->count : capacity;
	start = (ring->head + ring->capacity - keep) % ring->capacity;
	for (i = 0; i < keep; i++) {
		size_t j = (start + i) % ring->capacity;

		slots[i] = ring->slots[j];
		ring->slots[j] = NULL;
	}
	old = ring->slots;
	old_cap = ring->capacity;
	ring->slots = slots;
	ring->capacity = capacity;
	ring->count = keep;
	ring->head = keep % capacity;
	pthread_mutex_unlock(&ring->lock);
	for (i = 0; i < old_cap; i++)
		snapshot_unref(old[i]);
	free(old);
	return 0;
}

static size_t locked_read(struct snapshot_ring *ring, const size_t *field)
{
	size_t n;

	pthread_mutex_lock(&ring->lock);
	n = *field;
	pthread_mutex_unlock(&ring->lock);
	return n;
}

size_t snapshot_ring_capacity(struct snapshot_ring *ring)
{
	return locked_read(ring, &ring->capacity);
}

size_t snapshot_ring_count(struct snapshot_ring *ring)
{
	return locked_read(ring, &ring->count);
}
