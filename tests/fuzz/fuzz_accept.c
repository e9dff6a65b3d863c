// SPDX-License-Identifier: GPL-2.0
/* Accept header fields -> accept_format_parse() and _choose(). Each input
 * line is one field line, as a client that repeats the header sends them. */
#include "accept.h"
#include "fuzz.h"

static void check(const struct accept_format *af)
{
	enum expo_format chosen = accept_format_choose(af);

	FUZZ_CHECK((unsigned)chosen < EXPO_FORMAT__COUNT);
	for (int f = 0; f < EXPO_FORMAT__COUNT; f++) {
		FUZZ_CHECK(af->weight[f] >= -1 && af->weight[f] <= 1000);
		FUZZ_CHECK(af->weight[f] < 0 || af->rank[f] < af->n_named);
		/* Nothing named above the chosen one. */
		FUZZ_CHECK(af->weight[f] <= 0 || af->weight[f] <= af->weight[chosen]);
	}
	FUZZ_CHECK(af->n_named <= EXPO_FORMAT__COUNT);
	/* Another format only when the client names it acceptable. */
	if (chosen != EXPO_FORMAT_TEXT)
		FUZZ_CHECK(af->weight[chosen] > 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstring(data, size), *line, *save = NULL;
	struct accept_format af, single;

	accept_format_init(&af);
	accept_format_parse(&af, NULL);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		accept_format_init(&single);
		accept_format_parse(&single, line);
		check(&single);
		accept_format_parse(&af, line);
	}
	check(&af);
	free(text);
	return 0;
}
