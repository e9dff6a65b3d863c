// SPDX-License-Identifier: GPL-2.0
/* Prints a docs/metrics.md table row for each family of the catalogue (or
 * for those of the owners named as arguments): a start for documenting a new
 * family, in the form the unit test `catalogue` checks the doc against. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "catalogue.h"

static const char *doc_unit(enum metric_unit u)
{
	return u == METRIC_UNIT_NONE ? "" : u == METRIC_UNIT_BYTES_PER_SECOND ? "bytes/s" : metric_unit_name(u);
}

/* A | in a table cell must be escaped. */
static void put_cell_text(const char *s)
{
	for (; *s; s++)
		printf(*s == '|' ? "\\|" : "%c", *s);
}

static bool wanted(const struct metric_desc *d, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], d->owner) == 0)
			return true;
	return argc < 2;
}

int main(int argc, char **argv)
{
	size_t i;
	unsigned k;

	printf("| metric | type | labels | unit | source | meaning |\n|---|---|---|---|---|---|\n");
	for (i = 0; i < METRIC__COUNT; i++) {
		const struct metric_desc *d = &metric_catalogue[i];

		if (!wanted(d, argc, argv))
			continue;
		printf("| `%s` | %s |", d->name, metric_type_name(d->type));
		for (k = 0; k < d->n_labels; k++)
			printf("%s`%s`", k ? ", " : " ", d->labels[k]);
		printf(" |%s%s | %s | ", *doc_unit(d->unit) ? " " : "", doc_unit(d->unit), d->source);
		put_cell_text(d->help);
		printf(" |\n");
	}
	return 0;
}
