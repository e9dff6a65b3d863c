// SPDX-License-Identifier: GPL-2.0
#include "refresh_gate.h"

void refresh_gate_reset(struct refresh_gate *g)
{
	*g = (struct refresh_gate){ .primed = false };
}

void refresh_gate_expire(struct refresh_gate *g)
{
	g->expired = true;
}

bool refresh_gate_due(const struct refresh_gate *g, uint64_t interval, uint64_t lengths,
		      const struct refresh_signal *sig, size_t n)
{
	if (!g->primed || g->expired || interval <= 1 || g->lengths_since + (lengths ? lengths : 1) >= interval)
		return true;
	if (n > REFRESH_SIGNALS_MAX)
		n = REFRESH_SIGNALS_MAX;
	if (n != g->n_signals)
		return true;
	for (size_t i = 0; i < n; i++) {
		uint64_t threshold = sig[i].threshold ? sig[i].threshold : 1;

		if (sig[i].present != g->had[i])
			return true;
		if (!sig[i].present)
			continue;
		if (sig[i].value < g->at_read[i] || sig[i].value - g->at_read[i] >= threshold)
			return true;
	}
	return false;
}

void refresh_gate_read(struct refresh_gate *g, const struct refresh_signal *sig, size_t n, uint64_t now_usec)
{
	if (n > REFRESH_SIGNALS_MAX)
		n = REFRESH_SIGNALS_MAX;
	g->primed = true;
	g->expired = false;
	g->lengths_since = 0;
	g->read_usec = now_usec;
	g->reads_total++;
	g->n_signals = n;
	for (size_t i = 0; i < n; i++) {
		g->at_read[i] = sig[i].present ? sig[i].value : 0;
		g->had[i] = sig[i].present;
	}
}

void refresh_gate_reuse(struct refresh_gate *g, uint64_t lengths)
{
	g->lengths_since += lengths ? lengths : 1;
}

double refresh_gate_age_seconds(const struct refresh_gate *g, uint64_t now_usec)
{
	if (!g->primed || now_usec < g->read_usec)
		return 0;
	return (double)(now_usec - g->read_usec) / 1e6;
}
