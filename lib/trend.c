// SPDX-License-Identifier: GPL-2.0
#include "trend.h"

void trend_init(struct trend *t, struct trend_point *points, size_t cap)
{
	*t = (struct trend){ .points = points, .cap = cap };
}

void trend_add(struct trend *t, uint64_t horizon_usec, uint64_t t_usec, double value)
{
	size_t newest = (t->head + t->cap - 1) % t->cap;

	if (t->count && t_usec - t->points[newest].t_usec < horizon_usec / t->cap)
		return;
	t->points[t->head] = (struct trend_point){ t_usec, value };
	t->head = (t->head + 1) % t->cap;
	if (t->count < t->cap)
		t->count++;
}

bool trend_slope(const struct trend *t, uint64_t horizon_usec, uint64_t now_usec, double *slope)
{
	double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, den;

	for (size_t i = 0; i < t->count; i++) {
		const struct trend_point *p = &t->points[(t->head + t->cap - 1 - i) % t->cap];
		/* Times relative to now keep the sums well conditioned. */
		double x = -((double)(now_usec - p->t_usec) / 1e6);

		if (now_usec - p->t_usec > horizon_usec)
			break;
		n++;
		sx += x;
		sy += p->value;
		sxx += x * x;
		sxy += x * p->value;
	}
	den = n * sxx - sx * sx;
	if (n < 3 || den <= 0)
		return false;
	*slope = (n * sxy - sx * sy) / den;
	return true;
}

bool trend_eta(double value, double limit, double slope, double *eta)
{
	if (!(slope > 0))
		return false;
	*eta = value >= limit ? 0 : (limit - value) / slope;
	return true;
}
