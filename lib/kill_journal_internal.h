/* SPDX-License-Identifier: GPL-2.0 */
/* What lib/kill_journal_fields.c (writing) and kill_journal_parse.c (reading)
 * share: the fields and their names, one table for both, so that a name
 * cannot drift between the two. Not for other users. */
#ifndef MEMWATCH_KILL_JOURNAL_INTERNAL_H
#define MEMWATCH_KILL_JOURNAL_INTERNAL_H

#include "kill_journal_fields.h"

enum field {
	F_MESSAGE_ID,
	F_KIND,
	F_TIMESTAMP,
	F_PID,
	F_TID,
	F_COMM,
	F_CGROUP,
	F_CGROUP_ID,
	F_AVAIL,
	F_AVAIL_SOURCE,
	F_ORDER,
	F_SUPPRESSED,
	F_TOTAL_VM,
	F_SCOPE,
	F_SCOPE_SOURCE,
	F_OOM_CGROUP,
	F_OOM_CGROUP_ID,
	F_USAGE,
	F_LIMIT,
	F_ANON,
	F_FILE,
	F_SHMEM,
	F_SCORE_ADJ,
	F_KILLER,
	F_KILLER_PID,
	F_SIGNAL,
	F_UNIT,
	F_NAMESPACE,
	F_POD,
	F_CONTAINER,
	F_CONTAINER_ID,
	F_PSI_SOME_AVG10,
	F_PSI_FULL_AVG10,
	F_PSI_SOME_TOTAL,
	F_PSI_FULL_TOTAL,
	F_CGROUP_SOURCE,
	F_PSI_SOURCE,
	F_COUNT,
};

/* One table for writing and reading: a name cannot drift between the two. */

extern const char *const journal_field_names[F_COUNT];
extern const char *const journal_kind_names[EVENT_KINDS];
extern const char *const journal_scope_names[OOM_SCOPES];
#define JOURNAL_AVAIL_SOURCES 5
extern const char *const journal_avail_sources[JOURNAL_AVAIL_SOURCES];
#define JOURNAL_CGROUP_SOURCES 3
extern const char *const journal_cgroup_sources[JOURNAL_CGROUP_SOURCES];
#define JOURNAL_PSI_SOURCES 2
extern const char *const journal_psi_sources[JOURNAL_PSI_SOURCES];

#endif
