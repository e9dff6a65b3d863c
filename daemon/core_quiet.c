// SPDX-License-Identifier: GPL-2.0
/* Windows that go on while memory stands still, and sleeping through them
 * (daemon.quiet_read_interval). */
#include <poll.h>
#include <stdint.h>
#include "clock.h"
#include "core.h"
#include "macro.h"
#include "stir.h"

/* Whether a window that reached `at` (an end on its grid, or now) may go on
 * to its next end: while it is shorter than quiet_read_interval (give or
 * take half a window), or while that next end still comes before the
 * scrape expected, within the longest a window at rest lasts. */
static bool may_go_past(const struct core *core, uint64_t at)
{
	const struct daemon_config *d = &core->config->daemon;
	uint64_t limit = (uint64_t)d->quiet_read_msec * USEC_PER_MSEC, length = (uint64_t)d->window_msec * USEC_PER_MSEC;
	uint64_t rest = (uint64_t)daemon_config_longest_rest_msec(d) * USEC_PER_MSEC, next = at + length;

	if (at - core->window_start_mono_usec + length / 2 < limit)
		return true;
	return core->reader_due_mono && next + READER_MARGIN_USEC <= core->reader_due_mono &&
	       next - core->window_start_mono_usec <= rest;
}

/* A window goes on past its length, up to quiet_read_interval (give or take
 * half a window), while no pressure instant came since it started, no reload,
 * no collector counted what ends it (kswapd wakes) and every running
 * collector that watches memory move (the meminfo collector's sampler) says
 * nothing did: at rest the daemon then reads and publishes once an interval,
 * and a window still ends within its length of a move. Where /metrics is
 * scraped at a steady rhythm, it goes on to the last end before the next
 * scrape instead (at most four intervals): one read per scrape, published
 * fresh for it, not one per interval that nobody reads. */
bool core_window_goes_on(struct core *core, uint64_t now_mono)
{
	const struct daemon_config *d = &core->config->daemon;
	bool answered = false;
	size_t i;

	if (!d->quiet_read_msec || core->reloaded || !may_go_past(core, now_mono) ||
	    event_channel_instants_total(core->events) != core->instants_at_start)
		return false;
	for (i = 0; i < n_all_collectors; i++) {
		struct collector_instance *ci = &core->collectors[i];

		if (!ci->status.running)
			continue;
		if (ci->ops->busy && ci->ops->busy(ci->priv))
			return false;
		if (!ci->ops->quiet)
			continue;
		if (!ci->ops->quiet(ci->priv))
			return false;
		answered = true;
	}
	core->window_went_on |= answered;
	return answered;
}

/* Where core_window_goes_on first says no, on the grid of end_mono. */
static uint64_t window_last_end(const struct core *core, uint64_t end_mono)
{
	uint64_t length = (uint64_t)core->config->daemon.window_msec * USEC_PER_MSEC;

	if (!core->config->daemon.quiet_read_msec)
		return end_mono;
	while (may_go_past(core, end_mono))
		end_mono += length;
	return end_mono;
}

void core_expect_reader(struct core *core, uint64_t due_mono)
{
	core->reader_due_mono = due_mono;
}

static bool watches(const struct collector_instance *ci)
{
	return ci->status.running && (ci->ops->quiet || ci->ops->busy);
}

bool core_watch(struct core *core, uint64_t *window_end)
{
	uint64_t last = window_last_end(core, *window_end);
	bool all = core->stir != NULL, answered = false;
	size_t i;

	if (last == *window_end || core->reloaded)
		return false;
	core->watching = true;
	for (i = 0; i < n_all_collectors; i++) {
		struct collector_instance *ci = &core->collectors[i];

		if (!watches(ci))
			continue;
		if (!ci->ops->watch || !ci->ops->watch(ci->priv, true))
			all = false;
		else if (ci->ops->quiet)
			answered = true;
	}
	if (!event_channel_watch(core->events, true))
		all = false;
	/* An instant counted before the consumer was told to watch stirs nothing. */
	if (event_channel_instants_total(core->events) != core->instants_at_start)
		all = false;
	if (!all || !answered) {
		core_unwatch(core);
		return false;
	}
	core->window_went_on = true;
	*window_end = last;
	return true;
}

void core_unwatch(struct core *core)
{
	size_t i;

	for (i = 0; core->watching && i < n_all_collectors; i++) {
		struct collector_instance *ci = &core->collectors[i];

		if (watches(ci) && ci->ops->watch)
			(void)ci->ops->watch(ci->priv, false);
	}
	core->watching = false;
	/* Emptied whether armed or not: a program or the consumer that saw
	 * the arming just before it was undone may write after. */
	(void)event_channel_watch(core->events, false);
	stir_drain(core->stir);
}

size_t core_stir_fds(const struct core *core, struct pollfd *fds, size_t max)
{
	int fd[2] = { stir_fd(core->stir), event_channel_stir_fd(core->events) };
	size_t i, n = 0;

	for (i = 0; i < ARRAY_SIZE(fd) && n < max; i++)
		if (fd[i] >= 0)
			fds[n++] = (struct pollfd){ .fd = fd[i], .events = POLLIN };
	return n;
}
