/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_TREND_H
#define MEMWATCH_TREND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A least-squares trend over the last `horizon` of a series sampled now and
 * then, in a ring the caller sizes: points closer together than horizon /
 * cap are thinned out, so the ring always spans the horizon. */
struct trend_point {
	uint64_t t_usec; /* monotonic */
	double value;
};

struct trend {
	struct trend_point *points; /* cap of them, the caller's */
	size_t cap, head, count;
};

void trend_init(struct trend *t, struct trend_point *points, size_t cap);
void trend_add(struct trend *t, uint64_t horizon_usec, uint64_t t_usec, double value);

/* Slope (value per second) of the least-squares line through the points of
 * the last horizon_usec before now_usec. false with fewer than three points
 * or no spread in time. */
bool trend_slope(const struct trend *t, uint64_t horizon_usec, uint64_t now_usec, double *slope);

/* Seconds until a series at value, rising at slope per second, reaches
 * limit: 0 when it is there already; false when it is not rising. */
bool trend_eta(double value, double limit, double slope, double *eta);

#endif
