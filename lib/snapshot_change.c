// SPDX-License-Identifier: GPL-2.0
/* A series' change from one window to the next: the JSON API's delta,
 * count_delta and sum_delta, and the status page's "last window" tables and
 * per-window charts. */
#include <math.h>
#include <string.h>
#include "snapshot_internal.h"

const struct family *snapshot_find_family(const struct snapshot *s, const struct metric_desc *desc)
{
	size_t i;

	for (i = 0; s && i < s->n_families; i++)
		if (s->families[i].desc->n_labels == desc->n_labels &&
		    strcmp(s->families[i].desc->name, desc->name) == 0)
			return &s->families[i];
	return NULL;
}

const struct sample *snapshot_find_sample(const struct family *f, const struct sample *like)
{
	size_t i;
	unsigned k;

	for (i = 0; f && i < f->n; i++) {
		bool match = true;

		for (k = 0; k < f->desc->n_labels && match; k++)
			match = strcmp(f->samples[i].label_values[k], like->label_values[k]) == 0;
		if (match)
			return &f->samples[i];
	}
	return NULL;
}

/* A value below the one before is a counter that started again from zero:
 * all of it is new. */
static double counter_change(double now, double before)
{
	return now >= before ? now - before : now;
}

bool snapshot_sample_change(const struct family *f, const struct sample *now, const struct sample *before,
			    struct snapshot_change *c)
{
	if (!before)
		return false;
	if (now->hist && before->hist) {
		uint64_t count = now->hist->cumulative[now->hist->n];
		uint64_t before_count = before->hist->cumulative[before->hist->n];
		bool restarted = count < before_count;

		/* The count tells a restart, for the sum too: a sum of
		 * negative observations falls without one. */
		*c = (struct snapshot_change){
			.value = NAN,
			.count = restarted ? count : count - before_count,
			.sum = restarted ? now->hist->sum : now->hist->sum - before->hist->sum,
		};
		return true;
	}
	if (f->desc->type != METRIC_COUNTER || now->hist || before->hist)
		return false;
	*c = (struct snapshot_change){ .value = counter_change(now->value, before->value), .sum = NAN };
	return true;
}

void snapshot_foreach_change(const struct snapshot *s, const struct snapshot *prev, const char *name,
			     void (*fn)(const char *const *labels, unsigned n_labels,
					const struct snapshot_change *c, void *ud),
			     void *ud)
{
	const struct family *f;

	for (size_t i = 0; (f = snapshot_family_named(s, name, &i)); i++) {
		const struct family *prev_f = snapshot_find_family(prev, f->desc);

		for (size_t j = 0; j < f->n; j++) {
			const struct sample *smp = &f->samples[j];
			struct snapshot_change c;
			bool known = snapshot_sample_change(f, smp, snapshot_find_sample(prev_f, smp), &c);

			fn((const char *const *)smp->label_values, f->desc->n_labels, known ? &c : NULL, ud);
		}
	}
}
