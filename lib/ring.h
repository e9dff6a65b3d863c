/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_RING_H
#define MEMWATCH_RING_H

#include <stddef.h>
#include "snapshot.h"

/* The last N published window snapshots. One writer publishes; any number
 * of readers take references. The lock is held only to move pointers. */
struct snapshot_ring;

struct snapshot_ring *snapshot_ring_new(size_t capacity);
void snapshot_ring_free(struct snapshot_ring *ring);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct snapshot_ring *, snapshot_ring_free)

/* Takes over the caller's reference; drops the oldest when full. Older
 * windows lose their rendered bodies (snapshot_trim()) once nobody else
 * holds them: only the newest is served in the exposition formats, the rest
 * through samples. */
void snapshot_ring_publish(struct snapshot_ring *ring, struct snapshot *s);
/* New reference to the newest snapshot, or NULL before the first window. */
struct snapshot *snapshot_ring_latest(struct snapshot_ring *ring);
/* Up to max references, oldest first; returns how many. */
size_t snapshot_ring_recent(struct snapshot_ring *ring, struct snapshot **out, size_t max);
/* Keeps the newest min(count, capacity) snapshots. */
int snapshot_ring_resize(struct snapshot_ring *ring, size_t capacity);
size_t snapshot_ring_capacity(struct snapshot_ring *ring);
size_t snapshot_ring_count(struct snapshot_ring *ring);

#endif
