/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_ACCEPT_ENCODING_H
#define MEMWATCH_ACCEPT_ENCODING_H

#include <stdbool.h>

/* What a request's Accept-Encoding header fields (RFC 9110 §12.5.3) say about
 * the two codings we can send. Weights are q-values in thousandths (0..1000),
 * -1 while the coding has not been mentioned. */
struct accept_encoding {
	int gzip;     /* "gzip" or its alias "x-gzip" */
	int identity;
	int any;      /* "*" */
};

void accept_encoding_init(struct accept_encoding *ae);
/* Adds one field value; call once per Accept-Encoding line. NULL is ignored. */
void accept_encoding_parse(struct accept_encoding *ae, const char *value);
/* True when gzip is acceptable (q > 0) and not ranked below an identity the
 * client names. */
bool accept_encoding_gzip(const struct accept_encoding *ae);

#endif
