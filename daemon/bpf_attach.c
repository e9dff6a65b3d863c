// SPDX-License-Identifier: GPL-2.0
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "bpf_attach.h"
#include "log.h"

static const char *const tracefs_roots[] = {
	"/sys/kernel/tracing",
	"/sys/kernel/debug/tracing",
};

const char *bpf_flavour_name(enum bpf_flavour f)
{
	switch (f) {
	case BPF_FLAVOUR_TP_BTF:
		return "tp_btf";
	case BPF_FLAVOUR_RAW_TP:
		return "raw_tp";
	case BPF_FLAVOUR_TRACEPOINT:
	default:
		return "tracepoint";
	}
}

/* Parsing the kernel's BTF takes tens of milliseconds: do it once. Only the
 * main thread probes, so a plain static is enough. */
static struct btf *vmlinux_btf;
static bool vmlinux_btf_tried;

const struct btf *bpf_vmlinux_btf(void)
{
	if (!vmlinux_btf_tried) {
		vmlinux_btf_tried = true;
		vmlinux_btf = btf__load_vmlinux_btf();
	}
	return vmlinux_btf;
}

static bool btf_has_tracepoint(const char *event)
{
	char name[128];

	if (!bpf_vmlinux_btf())
		return false;
	snprintf(name, sizeof(name), "btf_trace_%s", event);
	return btf__find_by_name_kind(vmlinux_btf, name, BTF_KIND_TYPEDEF) > 0;
}

void bpf_attach_release_caches(void)
{
	btf__free(vmlinux_btf);
	vmlinux_btf = NULL;
	vmlinux_btf_tried = false;
}

bool tracepoint_exists(const char *category, const char *event)
{
	char path[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tracefs_roots); i++) {
		snprintf(path, sizeof(path), "%s/events", tracefs_roots[i]);
		if (access(path, F_OK) < 0)
			continue;
		snprintf(path, sizeof(path), "%s/events/%s/%s/format", tracefs_roots[i], category, event);
		return access(path, F_OK) == 0;
	}
	/* No tracefs mounted (some containers): the kernel's BTF still knows its tracepoints. */
	return btf_has_tracepoint(event);
}

const struct config_choice bpf_attach_choices[] = {
	{ "auto", -1 },
	{ "tp_btf", BPF_FLAVOUR_TP_BTF },
	{ "raw_tp", BPF_FLAVOUR_RAW_TP },
	{ "tracepoint", BPF_FLAVOUR_TRACEPOINT },
	{ NULL, 0 },
};

int bpf_hooks_probe(const struct bpf_hook *hooks, size_t n, struct collector_status *st)
{
	char missing[192] = "";
	size_t i, len = 0;

	for (i = 0; i < n; i++) {
		if (tracepoint_exists(hooks[i].category, hooks[i].event))
			continue;
		if (!hooks[i].optional) {
			collector_status_set_reason(st, "tracepoint %s:%s not available", hooks[i].category,
						    hooks[i].event);
			return -EOPNOTSUPP;
		}
		len += (size_t)snprintf(missing + len, len < sizeof(missing) ? sizeof(missing) - len : 0,
					"%s%s:%s", len ? ", " : "", hooks[i].category, hooks[i].event);
	}
	if (len) {
		st->state = COLLECTOR_DEGRADED;
		collector_status_set_reason(st, "tracepoints not available: %s", missing);
	}
	return 0;
}

void bpf_attachment_detach(struct bpf_attachment *a)
{
	for (size_t i = 0; i < a->n_links; i++)
		bpf_link__destroy(a->links[i]);
	a->n_links = 0;
}

void bpf_attachment_destroy(struct bpf_attachment *a)
{
	bpf_attachment_detach(a);
	if (a->skel && a->ops)
		a->ops->destroy(a->skel);
	a->skel = NULL;
}

static struct bpf_program *hook_program(void *skel, const struct bpf_hook *hook, enum bpf_flavour f)
{
	if (!hook->prog_offset[f])
		return NULL;
	return *(struct bpf_program **)((char *)skel + hook->prog_offset[f]);
}

static int try_flavour(struct bpf_attachment *a, const struct bpf_hook *hooks, size_t n,
		       enum bpf_flavour f, int (*configure)(void *, void *), void *userdata)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	bool any = false;
	size_t i;
	int r;

	a->skel = a->ops->open();
	if (!a->skel)
		return -errno ?: -EINVAL;
	obj = a->ops->object(a->skel);
	bpf_object__for_each_program(prog, obj)
		bpf_program__set_autoload(prog, false);
	for (i = 0; i < n; i++) {
		if (!a->hook_present[i] || !hooks[i].prog_offset[f])
			continue;
		prog = hook_program(a->skel, &hooks[i], f);
		if (!prog)
			return -ENOENT;
		bpf_program__set_autoload(prog, true);
		any = true;
	}
	if (!any)
		return -EOPNOTSUPP;
	if (configure) {
		r = configure(a->skel, userdata);
		if (r < 0)
			return r;
	}
	r = a->ops->load(a->skel);
	if (r < 0)
		return r;
	for (i = 0; i < n; i++) {
		struct bpf_link *link;

		if (!a->hook_present[i] || !hooks[i].prog_offset[f])
			continue;
		if (a->n_links >= BPF_MAX_LINKS)
			return -E2BIG;
		link = bpf_program__attach(hook_program(a->skel, &hooks[i], f));
		if (!link)
			return -errno ?: -EINVAL;
		a->links[a->n_links++] = link;
	}
	return 0;
}

int bpf_attach_hooks(struct bpf_attachment *a, const struct bpf_skel_ops *ops,
		     const struct bpf_hook *hooks, size_t n, int flavour,
		     int (*configure)(void *skel, void *userdata), void *userdata,
		     struct collector_status *st)
{
	int r, first_error = 0;
	size_t i;

	*a = (struct bpf_attachment){ .ops = ops };
	if (n > BPF_MAX_LINKS)
		return -E2BIG;
	r = bpf_hooks_probe(hooks, n, st);
	if (r < 0)
		return r;
	for (i = 0; i < n; i++)
		a->hook_present[i] = tracepoint_exists(hooks[i].category, hooks[i].event);

	log_set_libbpf_quiet(true);
	for (enum bpf_flavour f = 0; f < _BPF_FLAVOUR_MAX; f++) {
		if (flavour >= 0 && (int)f != flavour)
			continue;
		r = try_flavour(a, hooks, n, f, configure, userdata);
		if (r == 0) {
			a->flavour = f;
			snprintf(st->mode, sizeof(st->mode), "%s", bpf_flavour_name(f));
			log_set_libbpf_quiet(false);
			return 0;
		}
		log_debug_errno(r, "%s: %s flavour did not load or attach: %m",
				hooks[0].event, bpf_flavour_name(f));
		if (!first_error || first_error == -EOPNOTSUPP)
			first_error = r;
		bpf_attachment_destroy(a);
	}
	log_set_libbpf_quiet(false);
	/* EACCES is also the verifier's "rejected": only EPERM means no privilege. */
	if (flavour >= 0 && first_error != -EPERM) {
		collector_status_set_reason(st, "attach = %s did not work: %s", bpf_flavour_name(flavour),
					    strerror(-first_error));
		return first_error < 0 ? first_error : -EINVAL;
	}
	if (first_error == -EPERM)
		collector_status_set_reason(st, "not permitted to load BPF programs (needs root, or CAP_BPF and CAP_PERFMON)");
	else
		collector_status_set_reason(st, "no attach flavour worked (tp_btf, raw_tp, tracepoint): %s "
					    "(log_level = debug shows libbpf's and the verifier's messages)",
					    strerror(-first_error));
	return first_error < 0 ? first_error : -EINVAL;
}

bool bpf_attachment_serves(const struct bpf_attachment *a, int old_flavour, int new_flavour)
{
	return new_flavour == old_flavour || (a->skel && new_flavour >= 0 && new_flavour == (int)a->flavour);
}

int bpf_shared_map_reuse(struct bpf_shared_maps *s, struct bpf_map *map)
{
	const char *name = bpf_map__name(map);
	size_t i;
	int fd;

	if (!s)
		return 0; /* the object keeps its own map */
	for (i = 0; i < s->n; i++)
		if (strcmp(s->maps[i].name, name) == 0)
			return bpf_map__reuse_fd(map, s->maps[i].fd);
	if (s->n == BPF_SHARED_MAPS_MAX)
		return -E2BIG;
	fd = bpf_map_create(bpf_map__type(map), name, bpf_map__key_size(map), bpf_map__value_size(map),
			    bpf_map__max_entries(map), NULL);
	if (fd < 0)
		return -errno;
	snprintf(s->maps[s->n].name, sizeof(s->maps[0].name), "%s", name);
	s->maps[s->n++].fd = fd;
	return bpf_map__reuse_fd(map, fd);
}

int bpf_shared_map_add(struct bpf_shared_maps *s, const char *name, int fd)
{
	if (!s || s->n == BPF_SHARED_MAPS_MAX)
		return -E2BIG;
	snprintf(s->maps[s->n].name, sizeof(s->maps[0].name), "%s", name);
	s->maps[s->n++].fd = fd;
	return 0;
}

int bpf_shared_map_fd(const struct bpf_shared_maps *s, const char *name)
{
	size_t i;

	for (i = 0; s && i < s->n; i++)
		if (strcmp(s->maps[i].name, name) == 0)
			return s->maps[i].fd;
	return -1;
}

bool bpf_shared_map_join(struct bpf_shared_maps *s, struct bpf_map *map)
{
	int fd = bpf_shared_map_fd(s, bpf_map__name(map));

	return fd >= 0 && bpf_map__reuse_fd(map, fd) == 0;
}

void bpf_shared_maps_close(struct bpf_shared_maps *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++)
		close(s->maps[i].fd);
	s->n = 0;
}

int bpf_program_loads_alone(const struct bpf_skel_ops *ops, size_t prog_offset)
{
	void *skel = ops->open();
	struct bpf_program *prog, *only;
	int r;

	if (!skel)
		return -errno;
	only = *(struct bpf_program **)((char *)skel + prog_offset);
	bpf_object__for_each_program(prog, ops->object(skel))
		bpf_program__set_autoload(prog, prog == only);
	log_set_libbpf_quiet(true);
	r = ops->load(skel);
	log_set_libbpf_quiet(false);
	ops->destroy(skel);
	return r;
}
