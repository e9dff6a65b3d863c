/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_CARRY_H
#define MEMWATCH_CARRY_H

#include <stddef.h>
#include <stdint.h>
#include "macro.h"
#include "snapshot.h"

/* Keeps a collector's counters and histograms continuous when the collector
 * is restarted (a new attach flavour, new BPF map sizes): a new instance
 * counts from zero, so the values the old one exported last are carried and
 * added to the new instance's series of the same name and labels.
 *
 * At the switch, carry_record() takes the old instance's last values and
 * carry_splice() the new one's first: a series below its carried value gets
 * the difference as its offset (a BPF counter that started again), one at or
 * above it gets none (a kernel counter such as /proc/vmstat that never
 * stopped). A series the new instance has not produced yet is decided when it
 * first appears, the same way, against zero; until then it is exported at its
 * carried value for as long as it is held. */
struct carry;

struct carry *carry_new(void);
void carry_free(struct carry *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct carry *, carry_free)

/* Every counter and histogram of snap's families since mark becomes a value
 * to continue from; hold_until_usec is how long one the new instance does not
 * produce stays exported (0: not at all). */
int carry_record(struct carry *c, struct snapshot *snap, size_t mark, uint64_t hold_until_usec);

/* Takes over prev's series that are still undecided and held at now_usec and
 * not in c: a restart right after a restart keeps what the first carried. One
 * that is in c (recorded from what prev held) keeps prev's hold: a series is
 * held for one hold after the restart that stopped producing it, however many
 * restarts follow. */
int carry_keep_held(struct carry *c, const struct carry *prev, uint64_t now_usec);

/* The new instance's first values, read right at the switch: decides the
 * offset of every carried series found there. first is not changed. */
void carry_splice(struct carry *c, struct snapshot *first, size_t mark);

/* Each window: adds the offsets to the carried series among snap's families
 * since mark (deciding those seen for the first time), adds the held series
 * that were not produced, and forgets the undecided ones whose hold ended.
 * Returns 0 or -ENOMEM (some held series then missing from this window). */
int carry_apply(struct carry *c, struct snapshot *snap, size_t mark, uint64_t now_usec);

size_t carry_size(const struct carry *c);

#endif
