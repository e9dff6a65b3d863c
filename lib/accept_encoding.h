/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_ACCEPT_ENCODING_H
#define MEMWATCH_ACCEPT_ENCODING_H

#include <stdbool.h>
#include <stddef.h>

/* What a request's Accept-Encoding header fields (RFC 9110 §12.5.3) say about
 * the two codings we can send. Weights are q-values in thousandths (0..1000),
 * -1 while the coding has not been mentioned. */
struct accept_encoding {
	int gzip;     /* "gzip" or its alias "x-gzip" */
	int identity;
	int any;      /* "*" */
};

/* A weight (RFC 9110 §12.4.2), of Accept and Accept-Encoding elements alike:
 * ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ), in thousandths;
 * -1 when malformed. p need not be NUL-terminated. */
int accept_qvalue_parse(const char *p, size_t len);

void accept_encoding_init(struct accept_encoding *ae);
/* Adds one field value; call once per Accept-Encoding line. NULL is ignored. */
void accept_encoding_parse(struct accept_encoding *ae, const char *value);
/* True when gzip is acceptable (q > 0) and not ranked below an identity the
 * client names. */
bool accept_encoding_gzip(const struct accept_encoding *ae);

#endif
