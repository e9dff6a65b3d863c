// SPDX-License-Identifier: GPL-2.0
/* One window as the JSON API serves it. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "catalogue.h"
#include "json.h"
#include "snapshot.h"
#include "snapshot_internal.h"

static const struct family *find_family(const struct snapshot *s, const struct metric_desc *desc)
{
	size_t i;

	for (i = 0; s && i < s->n_families; i++)
		if (s->families[i].desc->n_labels == desc->n_labels &&
		    strcmp(s->families[i].desc->name, desc->name) == 0)
			return &s->families[i];
	return NULL;
}

static const struct sample *find_sample(const struct family *f, const struct sample *like)
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

static void json_time(struct strbuf *sb, const char *key, uint64_t real_usec)
{
	strbuf_printf(sb, "\"%s\":%" PRIu64 ".%06" PRIu64, key, real_usec / 1000000, real_usec % 1000000);
}

static void json_sample(struct strbuf *sb, const struct family *f, const struct sample *smp,
			const struct family *prev_f)
{
	const struct sample *old = prev_f ? find_sample(prev_f, smp) : NULL;
	unsigned k;

	strbuf_putc(sb, '{');
	if (f->desc->n_labels) {
		strbuf_puts(sb, "\"labels\":{");
		for (k = 0; k < f->desc->n_labels; k++) {
			if (k)
				strbuf_putc(sb, ',');
			json_put_string(sb, f->desc->labels[k]);
			strbuf_putc(sb, ':');
			json_put_string(sb, smp->label_values[k]);
		}
		strbuf_puts(sb, "},");
	}
	if (smp->hist) {
		uint64_t count = smp->hist->cumulative[smp->hist->n];

		strbuf_printf(sb, "\"count\":%" PRIu64 ",\"sum\":", count);
		json_put_number(sb, smp->hist->sum);
		if (old && old->hist) {
			uint64_t old_count = old->hist->cumulative[old->hist->n];

			strbuf_printf(sb, ",\"count_delta\":%" PRIu64 ",\"sum_delta\":",
				      count >= old_count ? count - old_count : count);
			json_put_number(sb, smp->hist->sum - old->hist->sum);
		}
	} else {
		strbuf_puts(sb, "\"value\":");
		json_put_number(sb, smp->value);
		if (f->desc->type == METRIC_COUNTER && old) {
			strbuf_puts(sb, ",\"delta\":");
			json_put_number(sb, smp->value >= old->value ? smp->value - old->value : smp->value);
		}
	}
	strbuf_putc(sb, '}');
}

int snapshot_render_json(struct strbuf *sb, const struct snapshot *s, const struct snapshot *prev)
{
	static const struct {
		const char *key;
		enum metric_id id;
	} avail[] = {
		{ "last", MW_MEMORY_AVAILABLE_BYTES },
		{ "min", MW_MEMORY_AVAILABLE_WINDOW_MIN_BYTES },
		{ "max", MW_MEMORY_AVAILABLE_WINDOW_MAX_BYTES },
		{ "at_pressure_min", MW_MEMORY_AVAILABLE_AT_PRESSURE_BYTES },
	};
	size_t i, j;

	strbuf_printf(sb, "{\"seq\":%" PRIu64 ",", s->window.seq);
	json_time(sb, "start", s->window.start_real_usec);
	strbuf_putc(sb, ',');
	json_time(sb, "end", s->window.end_real_usec);
	strbuf_puts(sb, ",\"available_bytes\":{");
	for (i = 0; i < ARRAY_SIZE(avail); i++) {
		if (i)
			strbuf_putc(sb, ',');
		json_put_string(sb, avail[i].key);
		strbuf_putc(sb, ':');
		json_put_number(sb, snapshot_value(s, METRIC_NAME(avail[i].id), NULL));
	}
	strbuf_puts(sb, "},\"metrics\":{");
	for (i = 0; i < s->n_families; i++) {
		const struct family *f = &s->families[i];
		const struct family *prev_f = find_family(prev, f->desc);

		if (i)
			strbuf_putc(sb, ',');
		strbuf_puts(sb, "\n");
		json_put_string(sb, f->desc->name);
		strbuf_puts(sb, ":[");
		for (j = 0; j < f->n; j++) {
			if (j)
				strbuf_putc(sb, ',');
			json_sample(sb, f, &f->samples[j], prev_f);
		}
		strbuf_putc(sb, ']');
	}
	strbuf_puts(sb, "}}");
	return strbuf_failed(sb) ? -ENOMEM : 0;
}
