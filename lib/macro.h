/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_MACRO_H
#define MEMWATCH_MACRO_H

#include <stdlib.h>
#include <unistd.h>
#include <stdio.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

/* systemd-style scoped cleanup: freep(&p) frees *p and tolerates NULL. */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)            \
	static inline void func##p(type *p)                \
	{                                                  \
		if (*p)                                    \
			func(*p);                          \
	}

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

/* Hands an owned pointer (or fd) on: the value, leaving NULL (or -1) behind so
 * the variable's cleanup does nothing. */
#define TAKE_PTR(p)                                          \
	({                                                   \
		__typeof__(p) *_take_pp_ = &(p);             \
		__typeof__(p) _take_p_ = *_take_pp_;         \
		*_take_pp_ = NULL;                           \
		_take_p_;                                    \
	})
#define TAKE_FD(fd)                                          \
	({                                                   \
		int *_take_pfd_ = &(fd);                     \
		int _take_fd_ = *_take_pfd_;                 \
		*_take_pfd_ = -1;                            \
		_take_fd_;                                   \
	})

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

#define USEC_PER_SEC 1000000ULL
#define NSEC_PER_SEC 1000000000ULL
#define USEC_PER_MSEC 1000ULL
#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_MSEC 1000000ULL

#endif
