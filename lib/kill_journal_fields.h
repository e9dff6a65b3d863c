/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_KILL_JOURNAL_FIELDS_H
#define MEMWATCH_KILL_JOURNAL_FIELDS_H

/* An event of the event channel as a journal entry ("MEMWATCH_PID=123",
 * ...) and back: the daemon writes every kill and some pressure instants to
 * the journal (daemon/event_journal.c) and reads the kills back at start, so
 * that /api/v1/events shows them again after a restart exactly as before.
 * No journal here: the entry is a list of "NAME=value" items, as
 * sd_journal_sendv() takes them and sd_journal_enumerate_data() gives them.
 * Values are raw bytes (a comm may hold newlines or invalid UTF-8); only the
 * MESSAGE is escaped for people. */

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include "cgroup_names.h"
#include "events.h"

/* One per kind of entry, fixed forever: journalctl MESSAGE_ID=... finds
 * them, and packaging/catalog/memwatchd.catalog explains them. */
#define KILL_JOURNAL_ID_OOM_KILL "526efab35ed147918215e66aaad4cbe1"
#define KILL_JOURNAL_ID_USERSPACE_KILL "7276a0cda957462e860aec1a3ec66074"
#define KILL_JOURNAL_ID_PRESSURE "407d95f90cd246b180b325a3e3f88a82"

/* What /api/v1/events shows of an event (daemon/event_channel.h's struct
 * event_record and, for a kill, its struct kill_record), in plain fields. */
struct journal_event {
	uint64_t real_usec;        /* the event's own wall time; 0 if unknown */
	unsigned kind;             /* EVENT_* */
	uint32_t pid, tid;
	char comm[EVENT_COMM_LEN + 1];
	uint64_t cgroup_id;
	char cgroup[256];
	double avail_bytes;        /* NAN when unknown */
	const char *avail_source;  /* a static string: "none", "fexit", "kprobe", "counters", "procfs" */
	uint64_t value;            /* pressure instants: the order; OOM kills: the victim's total_vm pages */
	bool has_kill;             /* the rest is there (a kill whose record could be made) */
	struct kill_detail raw;    /* pages, as the kernel gave them */
	uint32_t flags;            /* KILL_HAS_*, KILL_SCOPE_FROM_CONTROL */
	char oom_cgroup[256];
	char killer[EVENT_COMM_LEN + 1];
	struct cgroup_labels names;
	double psi_some_avg10, psi_full_avg10; /* NAN when unknown */
	double psi_some_total_sec, psi_full_total_sec;
	const char *cgroup_source; /* kills: a static string, "none", "table" or "kill" (event_channel.h) */
	const char *psi_source;    /* kills: a static string, "kill" or "file" (event_channel.h), or NULL */
};

/* Everything unknown: zeros, NAN, avail_source "none". */
void journal_event_init(struct journal_event *e);

/* The names /api/v1/events uses (daemon/event_channel.c has the same). */
const char *journal_event_kind_name(unsigned kind);
const char *journal_oom_scope_name(unsigned scope);
/* KILL_JOURNAL_ID_* of a kind's entries. */
const char *journal_event_message_id(unsigned kind);
bool journal_event_is_kill(unsigned kind);

/* Room for every field of the largest entry, hostile strings included (a
 * unit test fills every string to the brim): no allocation on the event
 * consumer thread. */
#define JOURNAL_FIELDS_MAX 48
#define JOURNAL_FIELDS_BUF 8192

struct journal_fields {
	struct iovec iov[JOURNAL_FIELDS_MAX];
	size_t n;
	char buf[JOURNAL_FIELDS_BUF];
	size_t used;
	bool overflow;
};

/* The entry of e: MESSAGE_ID, PRIORITY (3 for kills, 4 for pressure
 * instants), SYSLOG_IDENTIFIER, MESSAGE and the MEMWATCH_* fields of what is
 * known. Byte counts are pages times page_size, as /api/v1/events shows
 * them. suppressed: pressure instants of e's kind left out since the last
 * one written (MEMWATCH_SUPPRESSED, and said in MESSAGE). Returns 0, or
 * -ENOBUFS (cannot happen with strings that fit struct journal_event). */
int journal_event_format(const struct journal_event *e, long page_size, uint64_t suppressed,
			 struct journal_fields *ret);

/* Reading an entry back, one "NAME=value" item at a time (an item of
 * sd_journal_enumerate_data() is valid only until the next call). A field
 * that is missing, malformed or out of range leaves its value unknown: a
 * string empty, a number 0, a double NAN, a KILL_HAS_* bit off (each bit
 * needs every field it covers). Unknown fields are ignored; of a field
 * given twice the last counts. */
struct journal_event_parser {
	/* Private. */
	struct journal_event ev;
	bool id_seen;        /* a MESSAGE_ID, ours or not */
	unsigned id_kind;    /* a kill's, from MESSAGE_ID; EVENT_KINDS: not a kill's */
	bool id_pressure;    /* MESSAGE_ID is KILL_JOURNAL_ID_PRESSURE */
	unsigned field_kind; /* from MEMWATCH_KIND; EVENT_KINDS: none */
	uint32_t have;       /* which of the values below parsed */
	uint64_t bytes[6];
	uint64_t order;
	unsigned scope;
	bool scope_control;
	int32_t score_adj;
};

void journal_event_parse_begin(struct journal_event_parser *p);
void journal_event_parse_field(struct journal_event_parser *p, const void *data, size_t len);
/* The event: 0, or -EINVAL when the entry names no kind of ours (MESSAGE_ID
 * or MEMWATCH_KIND). page_size turns byte counts back into pages; one that
 * is not a whole number of pages (written where pages were larger) is
 * rounded to the nearest. real_usec stays 0 without MEMWATCH_TIMESTAMP_USEC:
 * the caller knows when the entry was written. */
int journal_event_parse_end(struct journal_event_parser *p, long page_size, struct journal_event *ret);
/* All three at once, for items that stay valid. */
int journal_event_parse(const struct iovec *fields, size_t n, long page_size, struct journal_event *ret);

#endif
