// SPDX-License-Identifier: GPL-2.0
/* Docker's config.v2.json and containers/storage's containers.json ->
 * docker_config_name(), podman_list_names(), and the JSON reader under them
 * (lib/json_read.c) walked over whatever the input is. */
#include <errno.h>
#include "container_names.h"
#include "fuzz.h"
#include "json_read.h"
#include "utf8.h"

/* A name as the label gets it: terminated, valid UTF-8, no control characters. */
static void check_name(const char *name)
{
	const unsigned char *p = (const unsigned char *)name;

	FUZZ_CHECK(name[0] && strlen(name) < CONTAINER_NAME_MAX);
	while (*p) {
		size_t n = utf8_valid_len(p);

		FUZZ_CHECK(n > 0 && *p >= 0x20 && *p != 0x7f);
		p += n;
	}
}

static void check_pair(const char *id, const char *name, void *userdata)
{
	size_t *n = userdata;

	FUZZ_CHECK(strlen(id) == 64 && strspn(id, "0123456789abcdef") == 64);
	check_name(name);
	(*n)++;
}

/* Every member and element, to the reader's depth limit; spans stay inside the text. */
static void walk(const char *text, size_t len, struct json_span v, unsigned depth)
{
	char buf[64];
	size_t pos = 0;
	struct json_span e;
	int r;

	FUZZ_CHECK(v.p >= text && v.p + v.len <= text + len && v.len > 0);
	if (depth > JSON_READ_MAX_DEPTH + 1)
		abort();
	if (v.p[0] == '[') {
		while ((r = json_read_next(v, &pos, &e)) > 0)
			walk(text, len, e, depth + 1);
		FUZZ_CHECK(r == 0); /* checked whole already */
	} else if (v.p[0] == '{') {
		r = json_read_member(v, "Name", &e);
		FUZZ_CHECK(r == 0 || r == -ENOENT);
		if (r == 0)
			walk(text, len, e, depth + 1);
	} else if (v.p[0] == '"') {
		r = json_read_string(v, buf, sizeof(buf));
		FUZZ_CHECK(r == 0 || r == -ENOBUFS || r == -EBADMSG);
		FUZZ_CHECK(fuzz_terminated(buf, sizeof(buf)));
		if (r == 0)
			FUZZ_CHECK(utf8_chars(buf) <= strlen(buf));
	} else {
		FUZZ_CHECK(json_read_string(v, buf, sizeof(buf)) == -EBADMSG);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	char name[CONTAINER_NAME_MAX];
	struct json_span doc;
	size_t pairs = 0;
	int r, valid;

	valid = json_read_value(text, size, &doc) == 0;
	if (valid)
		walk(text, size, doc, 0);

	r = docker_config_name(text, size, name);
	FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -ENODATA || r == -ENOBUFS);
	FUZZ_CHECK(fuzz_terminated(name, sizeof(name)));
	if (r == 0)
		check_name(name);
	else
		FUZZ_CHECK(!name[0]);
	if (!valid)
		FUZZ_CHECK(r == -EBADMSG);

	r = podman_list_names(text, size, check_pair, &pairs);
	FUZZ_CHECK(r == 0 || r == -EBADMSG);
	if (!valid)
		FUZZ_CHECK(r == -EBADMSG && pairs == 0);
	return 0;
}
