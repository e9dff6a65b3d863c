/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCHD_STATUS_WORKLOADS_H
#define MEMWATCHD_STATUS_WORKLOADS_H

#include <stddef.h>
#include "ring.h"
#include "snapshot.h"
#include "strbuf.h"

/* The status page's "Workloads" table: at most this many cgroups. */
#define WORKLOADS_ROWS 10
/* A cgroup page's table of windows under its charts: the newest this many. */
#define CGROUP_TABLE_WINDOWS 60

/* The Workloads table of window s (prev: the window before, for the changes;
 * may be NULL) into the status page. */
void workloads_table(struct strbuf *sb, const struct snapshot *s, const struct snapshot *prev);

/* GET /cgroup?path=P: the page of one cgroup, its charts over the windows in
 * the ring. -ENOENT when the newest window does not export P (the caller
 * answers 404 with workloads_not_found()), -ENOMEM. */
int workloads_cgroup_page(struct strbuf *sb, struct snapshot_ring *ring, const char *path);
void workloads_not_found(struct strbuf *sb, const char *path);

/* "Window #N, ended YYYY-MM-DD HH:MM:SS UTC": which window a page shows, in
 * <data> elements whose values are its sequence number and end time
 * (seconds since the epoch, as /api/v1/windows writes "end"). */
void put_window_stamp(struct strbuf *sb, const struct snapshot *s, const char *id);

#endif
