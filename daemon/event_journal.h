/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCHD_EVENT_JOURNAL_H
#define MEMWATCHD_EVENT_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include "event_channel.h"
#include "macro.h"

/* The event channel's sink into the systemd journal ([events] journal):
 * every kill as a structured entry (lib/kill_journal_fields.h), pressure
 * instants at most one per kind per EVENT_JOURNAL_INSTANT_USEC, and at start
 * the kills of earlier runs read back into the channel, so that a restart
 * does not empty /api/v1/events. Without journald (no socket: a container)
 * it writes and reads nothing, and says so once. */
struct event_journal;

#define EVENT_JOURNAL_INSTANT_USEC (10 * USEC_PER_SEC)
/* How far back the kills of earlier runs are read. */
#define EVENT_JOURNAL_RESTORE_MAX_AGE_USEC (7 * 24 * 3600 * USEC_PER_SEC)

int event_journal_new(bool enabled, struct event_journal **ret);
/* After the channel that has it as its sink is freed. */
void event_journal_free(struct event_journal *j);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct event_journal *, event_journal_free)
/* A reload: on or off in place. */
void event_journal_apply(struct event_journal *j, bool enabled);

/* event_channel_set_sink()'s function: on the consumer thread. */
void event_journal_sink(void *userdata, const struct event_record *rec);

/* The newest kills of earlier runs and boots (at most max, none older than
 * EVENT_JOURNAL_RESTORE_MAX_AGE_USEC) into ch, oldest first. Once, at start,
 * before the consumer runs, and while reading the journal is still allowed
 * (before privileges are dropped). Logs what it did; returns how many, or a
 * negative errno. */
int event_journal_restore(struct event_journal *j, struct event_channel *ch, size_t max);

#endif
