/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCHD_BPF_ATTACH_H
#define MEMWATCHD_BPF_ATTACH_H

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <stdbool.h>
#include <stddef.h>
#include "collector.h"
#include "config.h"
#include "latency_export.h" /* what a BPF collector exports its latency histograms with */

enum bpf_flavour {
	BPF_FLAVOUR_TP_BTF,
	BPF_FLAVOUR_RAW_TP,
	BPF_FLAVOUR_TRACEPOINT,
	_BPF_FLAVOUR_MAX,
};

const char *bpf_flavour_name(enum bpf_flavour f);

/* One tracepoint and the program written for it in each flavour: where the
 * skeleton keeps each program's struct bpf_program pointer (an offset into the
 * skeleton; 0, the skeleton's own header, where none was written). */
struct bpf_hook {
	const char *category;
	const char *event;
	size_t prog_offset[_BPF_FLAVOUR_MAX];
	bool optional; /* a missing optional hook degrades the collector; a required one stops it */
};

/* The three programs bpf/memwatch.bpf.h's TP_FLAVOURS(name, ...) writes, as
 * fields of skeleton struct skel: a renamed program fails to compile here. */
#define BPF_HOOK_PROGS(skel, name) \
	{ offsetof(struct skel, progs.name##_btf), offsetof(struct skel, progs.name##_raw), \
	  offsetof(struct skel, progs.name##_tp) }

/* Skeleton entry points behind one type, so one loop serves every collector. */
struct bpf_skel_ops {
	void *(*open)(void);
	int (*load)(void *skel);
	void (*destroy)(void *skel);
	struct bpf_object *(*object)(void *skel);
};

#define DEFINE_BPF_SKEL_OPS(name)                                                      \
	static void *name##_open_any(void) { return name##__open(); }                  \
	static int name##_load_any(void *s) { return name##__load(s); }                \
	static void name##_destroy_any(void *s) { name##__destroy(s); }                \
	static struct bpf_object *name##_object_any(void *s) { return ((struct name *)s)->obj; } \
	static const struct bpf_skel_ops name##_skel_ops = {                           \
		.open = name##_open_any,                                               \
		.load = name##_load_any,                                               \
		.destroy = name##_destroy_any,                                         \
		.object = name##_object_any,                                           \
	}

#define BPF_MAX_LINKS 32

struct bpf_attachment {
	const struct bpf_skel_ops *ops;
	void *skel;
	struct bpf_link *links[BPF_MAX_LINKS];
	size_t n_links;
	enum bpf_flavour flavour;
	bool hook_present[BPF_MAX_LINKS];
};

bool tracepoint_exists(const char *category, const char *event);
/* The running kernel's BTF, parsed once (NULL without BTF). */
const struct btf *bpf_vmlinux_btf(void);
/* Frees what probing cached (the kernel's BTF); call once collectors are started. */
void bpf_attach_release_caches(void);

/* The "attach" key of BPF collectors, into an int: auto (-1) or one flavour by name. */
extern const struct config_choice bpf_attach_choices[];
#define BPF_ATTACH_KEY(type, member) CONFIG_KEY_CHOICE("attach", type, member, bpf_attach_choices)

/* Checks that the required hooks exist (for probe). */
int bpf_hooks_probe(const struct bpf_hook *hooks, size_t n, struct collector_status *st);

/* Opens, loads and attaches, trying tp_btf, then raw_tp, then the classic
 * tracepoint (only `flavour` when it is >= 0). configure (may be NULL) sets
 * rodata and map sizes between open and load.
 * Fills st->mode and, for missing optional hooks, st->state/reason. */
int bpf_attach_hooks(struct bpf_attachment *a, const struct bpf_skel_ops *ops,
		     const struct bpf_hook *hooks, size_t n, int flavour,
		     int (*configure)(void *skel, void *userdata), void *userdata,
		     struct collector_status *st);
/* Its programs stop running; the maps and the skeleton's counters stay readable. */
void bpf_attachment_detach(struct bpf_attachment *a);
void bpf_attachment_destroy(struct bpf_attachment *a);

/* Whether the one program at prog_offset in the skeleton (offsetof(struct
 * skel, progs.NAME)) loads here on its own, quietly: a cheap probe for an
 * fentry/fexit method before the flavour probing, which would otherwise fail
 * three times over. 0 or a negative errno. */
int bpf_program_loads_alone(const struct bpf_skel_ops *ops, size_t prog_offset);

/* BPF maps several objects share across collector instances (the memavail
 * map the pressure programs read): created from the first object's
 * definition, reused by every later one, closed with the core. */
#define BPF_SHARED_MAPS_MAX 8

struct bpf_shared_maps {
	struct {
		char name[BPF_OBJ_NAME_LEN];
		int fd;
	} maps[BPF_SHARED_MAPS_MAX];
	size_t n;
};

/* Before load: map becomes the shared map of its name. */
int bpf_shared_map_reuse(struct bpf_shared_maps *s, struct bpf_map *map);
/* A map made elsewhere, shared under name from now on; s owns fd. */
int bpf_shared_map_add(struct bpf_shared_maps *s, const char *name, int fd);
/* The shared map of that name, or -1. */
int bpf_shared_map_fd(const struct bpf_shared_maps *s, const char *name);
/* Before load: map becomes the shared map of its name if one was made
 * (bpf_shared_map_add); false, and it keeps its own, if none was. */
bool bpf_shared_map_join(struct bpf_shared_maps *s, struct bpf_map *map);
void bpf_shared_maps_close(struct bpf_shared_maps *s);

/* On reload: whether an attachment made for the "attach" key old_flavour
 * still serves new_flavour (the same key, or the flavour it runs in named),
 * so that its programs, maps and counters can stay. */
bool bpf_attachment_serves(const struct bpf_attachment *a, int old_flavour, int new_flavour);

#endif
