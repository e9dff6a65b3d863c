// SPDX-License-Identifier: GPL-2.0
/* One window as the JSON API serves it; the deltas are lib/snapshot_change.c's. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "catalogue.h"
#include "json.h"
#include "snapshot.h"
#include "snapshot_internal.h"

static void json_time(struct strbuf *sb, const char *key, uint64_t real_usec)
{
	strbuf_printf(sb, "\"%s\":%" PRIu64 ".%06" PRIu64, key, real_usec / 1000000, real_usec % 1000000);
}

static void json_sample(struct strbuf *sb, const struct family *f, const struct sample *smp,
			const struct family *prev_f)
{
	struct snapshot_change c;
	bool changed = snapshot_sample_change(f, smp, snapshot_find_sample(prev_f, smp), &c);
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
		if (changed) {
			strbuf_printf(sb, ",\"count_delta\":%" PRIu64 ",\"sum_delta\":", c.count);
			json_put_number(sb, c.sum);
		}
	} else {
		strbuf_puts(sb, "\"value\":");
		json_put_number(sb, smp->value);
		if (changed) {
			strbuf_puts(sb, ",\"delta\":");
			json_put_number(sb, c.value);
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
		const struct family *prev_f = snapshot_find_family(prev, f->desc);

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
