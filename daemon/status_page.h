/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCHD_STATUS_PAGE_H
#define MEMWATCHD_STATUS_PAGE_H

#include "event_channel.h"
#include "ring.h"
#include "strbuf.h"

/* GET /: a self-contained HTML page (inline SVG, no script needed, no external
 * resources) drawn from the windows in the ring and the recent events. */
int status_page_render(struct strbuf *sb, struct snapshot_ring *ring, struct event_channel *events);

#endif
