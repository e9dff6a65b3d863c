// SPDX-License-Identifier: GPL-2.0
/* Accept-Encoding header fields -> accept_encoding_parse(). Each input line
 * is one field line, as a client that repeats the header sends them. */
#include "accept_encoding.h"
#include "fuzz.h"

static void check_weight(int w)
{
	FUZZ_CHECK(w >= -1 && w <= 1000);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstring(data, size), *line, *save = NULL;
	struct accept_encoding ae, single;
	bool gzip;

	accept_encoding_init(&ae);
	accept_encoding_parse(&ae, NULL);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		accept_encoding_init(&single);
		accept_encoding_parse(&single, line);
		check_weight(single.gzip);
		check_weight(single.identity);
		check_weight(single.any);
		accept_encoding_parse(&ae, line);
	}
	check_weight(ae.gzip);
	check_weight(ae.identity);
	check_weight(ae.any);
	gzip = accept_encoding_gzip(&ae);
	/* gzip only when the client allows it, by name or through "*". */
	if (gzip)
		FUZZ_CHECK(ae.gzip > 0 || (ae.gzip < 0 && ae.any > 0));
	if (ae.gzip == 0)
		FUZZ_CHECK(!gzip);
	free(text);
	return 0;
}
