// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-id128.h>
/* No CODE_FILE=, CODE_LINE=, CODE_FUNC=: where the sink sits says nothing
 * about the event. */
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>
#include <systemd/sd-login.h>
#include <unistd.h>
#include "clock.h"
#include "event_journal.h"
#include "kill_journal_fields.h"
#include "log.h"

/* sd_journal_sendv() writes here: without it there is no journald to take
 * anything (a container, a build machine), only a send that fails. */
#define JOURNAL_SOCKET "/run/systemd/journal/socket"

struct event_journal {
	atomic_bool writing; /* [events] journal, and a journal there */
	bool wanted;         /* [events] journal */
	bool ram_only_logged;
	long page_size;

	/* The consumer thread's alone. */
	uint64_t last_instant_usec[EVENT_KINDS]; /* CLOCK_MONOTONIC */
	uint64_t suppressed[EVENT_KINDS];
	uint64_t failures;                       /* sends that failed in a row */
	struct journal_event scratch;
	struct journal_fields fields;
};

static bool journal_socket_present(void)
{
	return access(JOURNAL_SOCKET, F_OK) == 0;
}

/* lib/kill_journal_fields.c spells the kinds and scopes as /api/v1/events
 * does (event_channel.c): a restored event must read as it did. */
static void check_names(void)
{
	for (unsigned k = 0; k < EVENT_KINDS; k++)
		if (strcmp(event_kind_name(k), journal_event_kind_name(k)) != 0)
			log_error("Journal: event kind %u is '%s' in the API and '%s' in the journal", k, event_kind_name(k),
				  journal_event_kind_name(k));
	for (unsigned s = 0; s < OOM_SCOPES; s++)
		if (strcmp(oom_scope_name(s), journal_oom_scope_name(s)) != 0)
			log_error("Journal: OOM scope %u is '%s' in the API and '%s' in the journal", s, oom_scope_name(s),
				  journal_oom_scope_name(s));
}

static void update(struct event_journal *j, bool enabled)
{
	bool present = journal_socket_present();

	j->wanted = enabled;
	if (enabled && !present && !j->ram_only_logged) {
		log_info("Journal: no journald here (%s missing): events are kept in memory only, for "
			 "/api/v1/events, and a restart forgets them", JOURNAL_SOCKET);
		j->ram_only_logged = true;
	}
	atomic_store(&j->writing, enabled && present);
}

int event_journal_new(bool enabled, struct event_journal **ret)
{
	struct event_journal *j = calloc(1, sizeof(*j));

	*ret = NULL;
	if (!j)
		return -ENOMEM;
	j->page_size = sysconf(_SC_PAGESIZE);
	check_names();
	update(j, enabled);
	*ret = j;
	return 0;
}

void event_journal_free(struct event_journal *j)
{
	free(j);
}

void event_journal_apply(struct event_journal *j, bool enabled)
{
	bool was;

	if (!j)
		return;
	was = atomic_load(&j->writing);
	update(j, enabled);
	if (was != atomic_load(&j->writing))
		log_info("Journal: %s", was ? "events are no longer written to the journal" :
					      "kill events and pressure instants are written to the journal again");
}

static void journal_event_from(const struct event_record *rec, struct journal_event *e)
{
	const struct kill_record *k = rec->kill;

	journal_event_init(e);
	e->real_usec = rec->real_usec;
	e->kind = rec->kind;
	e->pid = rec->pid;
	e->tid = rec->tid;
	_Static_assert(sizeof(e->comm) == sizeof(rec->comm) && sizeof(e->cgroup) == sizeof(rec->cgroup), "comm, cgroup");
	memcpy(e->comm, rec->comm, sizeof(e->comm));
	memcpy(e->cgroup, rec->cgroup, sizeof(e->cgroup));
	e->cgroup_id = rec->cgroup_id;
	e->avail_bytes = rec->avail_bytes;
	e->avail_source = rec->avail_source;
	e->value = rec->value;
	if (!k)
		return;
	_Static_assert(sizeof(e->oom_cgroup) == sizeof(k->oom_cgroup) && sizeof(e->killer) == sizeof(k->killer),
		       "oom_cgroup, killer");
	e->has_kill = true;
	e->raw = k->raw;
	e->flags = k->flags;
	memcpy(e->oom_cgroup, k->oom_cgroup, sizeof(e->oom_cgroup));
	memcpy(e->killer, k->killer, sizeof(e->killer));
	e->names = k->names;
	e->cgroup_source = k->cgroup_source;
	e->psi_source = k->psi_source;
	e->psi_some_avg10 = k->psi_some_avg10;
	e->psi_full_avg10 = k->psi_full_avg10;
	e->psi_some_total_sec = k->psi_some_total_sec;
	e->psi_full_total_sec = k->psi_full_total_sec;
}

/* Kills always; a pressure instant when its kind wrote none for
 * EVENT_JOURNAL_INSTANT_USEC (the channel keeps them all, and a reclaim
 * storm would flood the journal), the next one saying how many were left
 * out. A kill is rare, and the one thing to find after a restart. */
void event_journal_sink(void *userdata, const struct event_record *rec)
{
	struct event_journal *j = userdata;
	uint64_t suppressed = 0;
	int r;

	if (!j || rec->kind >= EVENT_KINDS || !atomic_load_explicit(&j->writing, memory_order_relaxed))
		return;
	if (!journal_event_is_kill(rec->kind)) {
		uint64_t now = now_mono_usec();

		if (j->last_instant_usec[rec->kind] && now - j->last_instant_usec[rec->kind] < EVENT_JOURNAL_INSTANT_USEC) {
			j->suppressed[rec->kind]++;
			return;
		}
		j->last_instant_usec[rec->kind] = now;
		suppressed = j->suppressed[rec->kind];
		j->suppressed[rec->kind] = 0;
	}
	journal_event_from(rec, &j->scratch);
	r = journal_event_format(&j->scratch, j->page_size, suppressed, &j->fields);
	if (r == 0)
		r = sd_journal_sendv(j->fields.iov, (int)j->fields.n);
	if (r < 0) {
		/* Once per run of failures: the event is still in /api/v1/events. */
		if (j->failures++ == 0)
			log_warning_errno(r, "Journal: cannot write a %s event: %m", event_kind_name(rec->kind));
		return;
	}
	if (j->failures) {
		log_info("Journal: writing again, after %" PRIu64 " event(s) that could not be written", j->failures);
		j->failures = 0;
	}
}

/* Entries of earlier runs only: this process's own (a PID seen again in
 * the same boot means us) are live events, or would be. */
static bool own_entry(sd_journal *jr, const char *boot_field, const char *pid_field)
{
	const void *d;
	size_t l;

	if (sd_journal_get_data(jr, "_PID", &d, &l) < 0 || l != strlen(pid_field) || memcmp(d, pid_field, l) != 0)
		return false;
	return sd_journal_get_data(jr, "_BOOT_ID", &d, &l) >= 0 && l == strlen(boot_field) &&
	       memcmp(d, boot_field, l) == 0;
}

static int add_kill_ids(sd_journal *jr)
{
	int r = sd_journal_add_match(jr, "MESSAGE_ID=" KILL_JOURNAL_ID_OOM_KILL, 0);

	return r < 0 ? r : sd_journal_add_match(jr, "MESSAGE_ID=" KILL_JOURNAL_ID_USERSPACE_KILL, 0);
}

/* Anyone may log a MESSAGE_ID of ours; what journald itself adds (_UID,
 * _SYSTEMD_UNIT) no client can forge. Kills written by our user (root, or
 * the unit's transient user), or from within our own service. */
static int add_matches(sd_journal *jr)
{
	_cleanup_free_ char *unit = NULL;
	char match[320];
	int r;

	r = add_kill_ids(jr);
	if (r < 0)
		return r;
	snprintf(match, sizeof(match), "_UID=%u", (unsigned)getuid());
	r = sd_journal_add_match(jr, match, 0);
	if (r < 0)
		return r;
	/* A transient user (DynamicUser=) may get another uid next time. */
	if (sd_pid_get_unit(0, &unit) < 0 || strlen(unit) < strlen(".service") ||
	    strcmp(unit + strlen(unit) - strlen(".service"), ".service") != 0)
		return 0;
	if ((size_t)snprintf(match, sizeof(match), "_SYSTEMD_UNIT=%s", unit) >= sizeof(match))
		return 0;
	r = sd_journal_add_disjunction(jr);
	if (r >= 0)
		r = add_kill_ids(jr);
	if (r >= 0)
		r = sd_journal_add_match(jr, match, 0);
	return r;
}

static int record_from(const struct journal_event *e, struct event_record *rec)
{
	struct kill_record *k = calloc(1, sizeof(*k));

	if (!k)
		return -ENOMEM;
	*rec = (struct event_record){
		.real_usec = e->real_usec,
		.kind = e->kind,
		.pid = e->pid,
		.tid = e->tid,
		.cgroup_id = e->cgroup_id,
		.avail_bytes = e->avail_bytes,
		.avail_source = e->avail_source,
		.value = e->value,
		.kill = k,
	};
	memcpy(rec->comm, e->comm, sizeof(rec->comm));
	memcpy(rec->cgroup, e->cgroup, sizeof(rec->cgroup));
	k->raw = e->raw;
	k->flags = e->flags;
	memcpy(k->oom_cgroup, e->oom_cgroup, sizeof(k->oom_cgroup));
	memcpy(k->killer, e->killer, sizeof(k->killer));
	k->names = e->names;
	k->psi_some_avg10 = e->psi_some_avg10;
	k->psi_full_avg10 = e->psi_full_avg10;
	k->psi_some_total_sec = e->psi_some_total_sec;
	k->psi_full_total_sec = e->psi_full_total_sec;
	k->restored = true;
	k->cgroup_source = e->cgroup_source;
	k->psi_source = e->psi_source;
	return 0;
}

struct restored {
	struct event_record *recs;
	size_t n, cap;
};

static void restored_done(struct restored *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->recs[i].kill);
	free(r->recs);
}

static int restored_add(struct restored *r, const struct journal_event *e)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct event_record *recs = realloc(r->recs, cap * sizeof(*recs));

		if (!recs)
			return -ENOMEM;
		r->recs = recs;
		r->cap = cap;
	}
	if (record_from(e, &r->recs[r->n]) < 0)
		return -ENOMEM;
	r->n++;
	return 0;
}

/* The entry at jr's position, parsed; real_usec from the journal when the
 * entry lacks its own. */
static int read_entry(sd_journal *jr, uint64_t written_usec, long page_size, struct journal_event *ret)
{
	struct journal_event_parser p;
	const void *d;
	size_t l;
	int r;

	journal_event_parse_begin(&p);
	sd_journal_restart_data(jr);
	while ((r = sd_journal_enumerate_available_data(jr, &d, &l)) > 0)
		journal_event_parse_field(&p, d, l);
	if (r < 0)
		return r;
	r = journal_event_parse_end(&p, page_size, ret);
	if (r < 0 || !journal_event_is_kill(ret->kind))
		return r < 0 ? r : -EINVAL;
	if (!ret->real_usec)
		ret->real_usec = written_usec;
	return 0;
}

int event_journal_restore(struct event_journal *j, struct event_channel *ch, size_t max)
{
	_cleanup_(sd_journal_closep) sd_journal *jr = NULL;
	_cleanup_(restored_done) struct restored got = { 0 };
	char boot_field[64], pid_field[32];
	uint64_t now = now_real_usec(), oldest, skipped = 0;
	sd_id128_t boot;
	int r;

	if (!j || !ch || !max || !j->wanted)
		return 0;
	if (!atomic_load(&j->writing))
		return 0; /* no journald: said so already */
	oldest = now > EVENT_JOURNAL_RESTORE_MAX_AGE_USEC ? now - EVENT_JOURNAL_RESTORE_MAX_AGE_USEC : 0;
	r = sd_id128_get_boot(&boot);
	if (r < 0)
		return log_warning_errno(r, "Journal: no boot id, kill events of earlier runs not restored: %m");
	snprintf(boot_field, sizeof(boot_field), "_BOOT_ID=" SD_ID128_FORMAT_STR, SD_ID128_FORMAT_VAL(boot));
	snprintf(pid_field, sizeof(pid_field), "_PID=%d", (int)getpid());

	r = sd_journal_open(&jr, SD_JOURNAL_LOCAL_ONLY);
	if (r < 0)
		return log_warning_errno(r, "Journal: cannot open it, kill events of earlier runs not restored: %m");
	/* Opening succeeds with nothing readable: journal files are root's and
	 * group systemd-journal's (adm's too, on Debian). */
	if (sd_journal_has_runtime_files(jr) <= 0 && sd_journal_has_persistent_files(jr) <= 0) {
		log_info("Journal: no journal file readable by uid %u (needs root or group systemd-journal): "
			 "kill events of earlier runs not restored", (unsigned)getuid());
		return 0;
	}
	r = add_matches(jr);
	if (r < 0)
		return log_warning_errno(r, "Journal: cannot search it, kill events of earlier runs not restored: %m");
	r = sd_journal_seek_tail(jr);
	/* Newest first, until there are max or they are a week old. */
	while (r >= 0 && got.n < max && (r = sd_journal_previous(jr)) > 0) {
		struct journal_event e;
		uint64_t written;

		if (sd_journal_get_realtime_usec(jr, &written) < 0)
			continue;
		if (written < oldest)
			break;
		if (own_entry(jr, boot_field, pid_field))
			continue;
		if (read_entry(jr, written, j->page_size, &e) < 0) {
			skipped++;
			continue;
		}
		r = restored_add(&got, &e);
	}
	if (r < 0)
		log_warning_errno(r, "Journal: reading it back stopped early: %m");
	/* Oldest first, as the channel keeps them. */
	for (size_t a = 0, b = got.n; a + 1 < b; a++, b--) {
		struct event_record t = got.recs[a];

		got.recs[a] = got.recs[b - 1];
		got.recs[b - 1] = t;
	}
	event_channel_restore(ch, got.recs, got.n);
	if (skipped)
		log_info("Journal: %zu kill event(s) of earlier runs restored, %" PRIu64 " entries that did not "
			 "parse left out", got.n, skipped);
	else
		log_info("Journal: %zu kill event(s) of earlier runs restored", got.n);
	return (int)(got.n > INT32_MAX ? INT32_MAX : got.n);
}
