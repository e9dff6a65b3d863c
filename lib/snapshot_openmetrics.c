// SPDX-License-Identifier: GPL-2.0
/* One window in OpenMetrics 1.0 text: metadata under the family's name (a
 * counter's without "_total"), # UNIT from the catalogue, _created where the
 * emitter said when counting began (snapshot_set_created), # EOF last. */
#include <errno.h>
#include <string.h>
#include "catalogue.h"
#include "snapshot.h"
#include "snapshot_internal.h"

#define FAMILY_NAME_MAX 256

/* OpenMetrics escapes the double quote in HELP too, unlike the 0.0.4 text. */
static void put_help(struct strbuf *sb, const char *text)
{
	for (; *text; text++) {
		if (*text == '\\')
			strbuf_append(sb, "\\\\", 2);
		else if (*text == '\n')
			strbuf_append(sb, "\\n", 2);
		else if (*text == '"')
			strbuf_append(sb, "\\\"", 2);
		else
			strbuf_putc(sb, *text);
	}
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

/* The family's OpenMetrics name into base; false if it does not fit. */
static bool family_name(const struct metric_desc *d, char base[static FAMILY_NAME_MAX])
{
	size_t len = strlen(d->name);

	if (d->type == METRIC_COUNTER && ends_with(d->name, len, "_total"))
		len -= strlen("_total");
	if (len >= FAMILY_NAME_MAX)
		return false;
	memcpy(base, d->name, len);
	base[len] = '\0';
	return true;
}

static void put_metadata(struct strbuf *sb, const struct metric_desc *d, const char *base)
{
	size_t len = strlen(base);

	strbuf_puts(sb, "# TYPE ");
	strbuf_puts(sb, base);
	strbuf_putc(sb, ' ');
	strbuf_puts(sb, metric_type_name(d->type));
	strbuf_putc(sb, '\n');
	/* A UNIT must be the name's suffix, or Prometheus rejects the scrape. */
	if (d->unit != METRIC_UNIT_NONE && ends_with(base, len, metric_unit_suffix(d->unit))) {
		strbuf_puts(sb, "# UNIT ");
		strbuf_puts(sb, base);
		strbuf_putc(sb, ' ');
		strbuf_puts(sb, metric_unit_name(d->unit));
		strbuf_putc(sb, '\n');
	}
	strbuf_puts(sb, "# HELP ");
	strbuf_puts(sb, base);
	strbuf_putc(sb, ' ');
	put_help(sb, d->help);
	strbuf_putc(sb, '\n');
}

/* The exemplar of bucket b, if the family shows exemplars and there is one;
 * *next walks the records, which are ascending by bucket. */
static const struct exemplar_record *bucket_exemplar(const struct metric_desc *d, const struct histogram_data *h,
						     size_t b, const struct exemplar_record **next, size_t *left)
{
	const struct exemplar_record *r;

	if (!(d->flags & METRIC_FLAG_EXEMPLARS) || !h->extra)
		return NULL;
	if (!*next) {
		*next = histogram_extra_exemplars(h->extra);
		*left = h->extra->n_exemplars;
	}
	if (*left == 0 || (*next)->bucket != b)
		return NULL;
	r = *next;
	*next = exemplar_record_next(r);
	(*left)--;
	return r;
}

/* " # {name="value",...} value timestamp" after a bucket's count. */
static void put_exemplar(struct strbuf *sb, const struct exemplar_record *r)
{
	const char *t = r->text;

	strbuf_puts(sb, " # {");
	for (unsigned k = 0; k < r->n_labels; k++) {
		const char *value = t + strlen(t) + 1;

		if (k)
			strbuf_putc(sb, ',');
		strbuf_puts(sb, t);
		strbuf_puts(sb, "=\"");
		expo_put_label_value(sb, value);
		strbuf_putc(sb, '"');
		t = value + strlen(value) + 1;
	}
	strbuf_puts(sb, "} ");
	expo_put_number(sb, r->value);
	strbuf_putc(sb, ' ');
	expo_put_number(sb, r->timestamp_seconds);
}

static void put_bucket(struct strbuf *sb, const char *base, const struct metric_desc *d, const char *const *lv,
		       const char *le, uint64_t count, const struct exemplar_record *ex)
{
	expo_put_sample_open(sb, base, "_bucket", d, lv, "le", le, (double)count);
	if (ex)
		put_exemplar(sb, ex);
	strbuf_putc(sb, '\n');
}

static void render_family(struct strbuf *sb, const struct family *f)
{
	const struct metric_desc *d = f->desc;
	char base[FAMILY_NAME_MAX], le[EXPO_NUMBER_MAX];
	bool created = f->created_seconds > 0 && d->type != METRIC_GAUGE;
	size_t i, b;

	if (f->n == 0 || !family_name(d, base))
		return;
	put_metadata(sb, d, base);
	for (i = 0; i < f->n; i++) {
		const struct sample *smp = &f->samples[i];
		const char *const *lv = (const char *const *)smp->label_values;
		const struct histogram_data *h = smp->hist;

		if (!h) {
			expo_put_sample(sb, d->name, NULL, d, lv, NULL, NULL, smp->value);
		} else {
			const struct exemplar_record *next = NULL;
			size_t left = 0;

			for (b = 0; b < h->n; b++) {
				const char *text = le;

				if (h->bounds == d->bounds && d->le)
					text = d->le[b];
				else
					expo_format_number(le, h->bounds[b]);
				put_bucket(sb, base, d, lv, text, h->cumulative[b], bucket_exemplar(d, h, b, &next, &left));
			}
			put_bucket(sb, base, d, lv, "+Inf", h->cumulative[h->n], bucket_exemplar(d, h, h->n, &next, &left));
			expo_put_sample(sb, base, "_count", d, lv, NULL, NULL, (double)h->cumulative[h->n]);
			expo_put_sample(sb, base, "_sum", d, lv, NULL, NULL, h->sum);
		}
		if (created)
			expo_put_sample(sb, base, "_created", d, lv, NULL, NULL, f->created_seconds);
	}
}

int snapshot_render_openmetrics(const struct snapshot *s, struct strbuf *sb)
{
	strbuf_reserve(sb, 4096 + s->n_series * 112);
	for (size_t i = 0; i < s->n_families; i++)
		render_family(sb, &s->families[i]);
	strbuf_puts(sb, "# EOF\n");
	return strbuf_failed(sb) ? -ENOMEM : 0;
}
