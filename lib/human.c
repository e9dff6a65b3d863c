// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdio.h>
#include "human.h"
#include "macro.h"

static const char *missing(char *buf, size_t len, enum human_style style)
{
	snprintf(buf, len, "%s", style == HUMAN_UTF8 ? "–" : "-");
	return buf;
}

const char *human_bytes(char *buf, size_t len, double v, enum human_style style)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	size_t u = 0;

	if (isnan(v))
		return missing(buf, len, style);
	while (fabs(v) >= 1024 && u + 1 < ARRAY_SIZE(units)) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, units[u]);
	return buf;
}

const char *human_seconds(char *buf, size_t len, double v, enum human_style style)
{
	if (isnan(v))
		return missing(buf, len, style);
	if (v < 1e-3)
		snprintf(buf, len, "%.0f %s", v * 1e6, style == HUMAN_UTF8 ? "µs" : "us");
	else if (v < 1)
		snprintf(buf, len, "%.1f ms", v * 1e3);
	else
		snprintf(buf, len, "%.2f s", v);
	return buf;
}

const char *human_count(char *buf, size_t len, double v, enum human_style style)
{
	if (isnan(v))
		return missing(buf, len, style);
	snprintf(buf, len, "%.0f", v);
	return buf;
}
