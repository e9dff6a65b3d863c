// SPDX-License-Identifier: GPL-2.0
/* The cgroup collector's in-kernel source: a BPF cgroup iterator rooted at
 * the memory hierarchy (v1, or cgroup2 where memory lives there) reads the
 * counters of every cgroup in one read(): v1's usage, limit, failcnt and
 * OOM state; cgroup2's memory.current, .max, .high and .events. The walk
 * still decides which cgroups there are and reads memory.stat and
 * memory.pressure; a cgroup the iterator did not list (created since) is
 * read from cgroupfs. */
#include <linux/magic.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "bpf_attach.h"
#include "cgroup_internal.h"
#include "memcg.h"
#include "memcg.skel.h"

_Static_assert((int)MEMCG_RECORD_EVENT_LOW == (int)CGROUP_EVENT_LOW &&
		       (int)MEMCG_RECORD_EVENT_OOM_KILL == (int)CGROUP_EVENT_OOM_KILL &&
		       (int)MEMCG_RECORD_EVENTS == (int)CGROUP_EVENT_OOM_GROUP_KILL + 1,
	       "a record's events are memory.events' keys in enum cgroup_event's order");

/* A fixture tree is not a kernel hierarchy: there is nothing to iterate. */
static bool is_cgroupfs(int fd, bool v2)
{
	struct statfs sf;

	return fstatfs(fd, &sf) == 0 && sf.f_type == (v2 ? CGROUP2_SUPER_MAGIC : CGROUP_SUPER_MAGIC);
}

/* The tree the iterator walks: v1's memory hierarchy where there is one,
 * else cgroup2 when memory is there. -1: neither (or both trees have memory,
 * a configured pair, where the v2 walk reads its own files). */
int cgroup_bpf_root_fd(const struct roots *r, bool *v2)
{
	*v2 = r->v1_fd < 0;
	if (r->v1_fd >= 0)
		return r->v2_memory ? -1 : r->v1_fd;
	return r->v2_memory ? r->v2_fd : -1;
}

/* The programs that say the last read may be out of date, in the order of
 * s->memcg_watch; one whose tracepoint this kernel lacks is not loaded. */
static struct bpf_program *watch_prog(struct memcg_bpf *skel, unsigned i)
{
	struct bpf_program *progs[] = {
		skel->progs.memcg_tree_mkdir, skel->progs.memcg_tree_rmdir, skel->progs.memcg_tree_rename,
		skel->progs.memcg_reclaim_begin,
	};

	return progs[i];
}

static const char *const watch_tracepoints[CGROUP_WATCHES] = {
	"cgroup_mkdir", "cgroup_rmdir", "cgroup_rename", "mm_vmscan_memcg_reclaim_begin",
};

/* From the kernel's BTF parsed once for every collector (bpf_attach.c):
 * each libbpf_find_vmlinux_btf_id() parses all of it again (5 MiB here). */
static bool kernel_btf_has(const char *name, int kind)
{
	const struct btf *btf = bpf_vmlinux_btf();

	return btf && btf__find_by_name_kind(btf, name, kind) > 0;
}

static void watch_prepare(struct cgroup_state *s)
{
	for (unsigned i = 0; i < CGROUP_WATCHES; i++) {
		char name[128];

		snprintf(name, sizeof(name), "btf_trace_%s", watch_tracepoints[i]);
		if (!kernel_btf_has(name, BTF_KIND_TYPEDEF))
			bpf_program__set_autoload(watch_prog(s->memcg_skel, i), false);
	}
}

/* Each on its own: without the tree's three, every window reads (cgroup.c). */
static void watch_attach(struct cgroup_state *s)
{
	for (unsigned i = 0; i < CGROUP_WATCHES; i++) {
		struct bpf_program *prog = watch_prog(s->memcg_skel, i);

		s->memcg_watch[i] = bpf_program__autoload(prog) ? bpf_program__attach(prog) : NULL;
		if (!s->memcg_watch[i])
			log_debug("cgroup: tracepoint %s not watched: every window reads the iterator%s",
				  watch_tracepoints[i], i == CGROUP_WATCH_RECLAIM ? " when memcgs reclaim" : "");
	}
}

bool cgroup_bpf_watched(const struct cgroup_state *s, unsigned watch)
{
	if (!s->memcg_iter)
		return false;
	if (watch == CGROUP_WATCH_TREE)
		return s->memcg_watch[0] && s->memcg_watch[1] && s->memcg_watch[2];
	return s->memcg_watch[watch] != NULL;
}

uint64_t cgroup_bpf_watch_count(const struct cgroup_state *s, unsigned watch)
{
	if (!s->memcg_skel)
		return 0;
	return watch == CGROUP_WATCH_TREE ? s->memcg_skel->bss->tree_changes : s->memcg_skel->bss->memcg_reclaims;
}

bool cgroup_bpf_covers_tree(const struct cgroup_state *s)
{
	return s->memcg_iter && s->n_memcg > 0 && !(s->roots.v1_fd >= 0 && s->roots.v2_memory);
}

int cgroup_bpf_start(struct cgroup_state *s)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info linfo;
	long page = sysconf(_SC_PAGESIZE);
	bool v2;
	int fd = cgroup_bpf_root_fd(&s->roots, &v2);
	int r;

	if (!s->cfg.use_bpf || fd < 0 || !is_cgroupfs(fd, v2))
		return 0;
	/* Cgroup iterators came with 6.1: before, cgroupfs serves it all. */
	if (!kernel_btf_has("bpf_iter_cgroup", BTF_KIND_FUNC)) {
		log_info("Collector cgroup: this kernel has no BPF cgroup iterator (6.1+): reading cgroupfs");
		return 0;
	}
	s->memcg_v2 = v2;
	memset(&linfo, 0, sizeof(linfo));
	linfo.cgroup.cgroup_fd = (__u32)fd;
	linfo.cgroup.order = BPF_CGROUP_ITER_DESCENDANTS_PRE;
	opts.link_info = &linfo;
	opts.link_info_len = sizeof(linfo);
	/* As many as the walk may visit, and the tree's own cgroups above a subtree root. */
	s->memcg_slots = (size_t)s->cfg.max_cgroups + 256;
	log_set_libbpf_quiet(true);
	s->memcg_skel = memcg_bpf__open();
	if (!s->memcg_skel) {
		r = -errno;
		goto out;
	}
	watch_prepare(s);
	r = bpf_map__set_max_entries(s->memcg_skel->maps.records, (__u32)s->memcg_slots);
	if (r == 0)
		r = memcg_bpf__load(s->memcg_skel);
	if (r < 0)
		goto out;
	s->memcg_map_len = s->memcg_slots * sizeof(struct memcg_record);
	s->memcg_map = mmap(NULL, s->memcg_map_len, PROT_READ, MAP_SHARED, bpf_map__fd(s->memcg_skel->maps.records), 0);
	if (s->memcg_map == MAP_FAILED) {
		s->memcg_map = NULL;
		r = -errno;
		goto out;
	}
	s->memcg_iter = bpf_program__attach_iter(s->memcg_skel->progs.dump_memcg, &opts);
	r = s->memcg_iter ? 0 : -errno;
	if (r == 0)
		watch_attach(s);
out:
	log_set_libbpf_quiet(false);
	if (r < 0) {
		cgroup_bpf_stop(s);
		return r;
	}
	s->page_size = page > 0 ? (uint64_t)page : 4096;
	return 1;
}

void cgroup_bpf_stop(struct cgroup_state *s)
{
	if (s->memcg_map)
		munmap(s->memcg_map, s->memcg_map_len);
	s->memcg_map = NULL;
	for (unsigned i = 0; i < CGROUP_WATCHES; i++) {
		bpf_link__destroy(s->memcg_watch[i]);
		s->memcg_watch[i] = NULL;
	}
	bpf_link__destroy(s->memcg_iter);
	memcg_bpf__destroy(s->memcg_skel);
	s->memcg_iter = NULL;
	s->memcg_skel = NULL;
	s->n_memcg = 0;
}

void cgroup_bpf_free(struct cgroup_state *s)
{
	cgroup_bpf_stop(s);
	free(s->memcg);
	s->memcg = NULL;
	s->cap_memcg = 0;
}

static int cmp_id(const void *a, const void *b)
{
	const struct memcg_record *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

int cgroup_bpf_refresh(struct cgroup_state *s)
{
	struct memcg_bpf__bss *bss;
	char byte;
	size_t n;
	int fd, r = 0;

	s->n_memcg = 0;
	s->memcg_fresh = false;
	if (!s->memcg_iter)
		return 0;
	bss = s->memcg_skel->bss;
	bss->n_records = bss->overflowed = bss->complete = 0;
	fd = bpf_iter_create(bpf_link__fd(s->memcg_iter));
	if (fd < 0)
		return -errno;
	/* The program writes nothing to the file: one read() runs the whole walk. */
	for (;;) {
		ssize_t got = read(fd, &byte, sizeof(byte));

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			r = -errno;
		if (got <= 0)
			break;
	}
	close(fd);
	if (r < 0)
		return r;
	if (!bss->complete)
		return -EIO;
	n = bss->n_records < s->memcg_slots ? bss->n_records : s->memcg_slots;
	if (n > s->cap_memcg) {
		struct memcg_record *p = realloc(s->memcg, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->memcg = p;
		s->cap_memcg = n;
	}
	memcpy(s->memcg, s->memcg_map, n * sizeof(*s->memcg));
	s->n_memcg = n;
	/* Pre-order is not id order; a cgroup created since is looked up and missed. */
	qsort(s->memcg, s->n_memcg, sizeof(*s->memcg), cmp_id);
	/* Which cgroups there are, under which names: the same tree as last
	 * window's when this is unchanged. A list cut short never is. */
	s->memcg_signature = s->n_memcg;
	for (size_t i = 0; i < s->n_memcg; i++)
		s->memcg_signature = cgroup_key_mix(s->memcg_signature ^ s->memcg[i].id) ^
				     cgroup_key_mix(s->memcg[i].name_hash + s->memcg[i].level);
	if (bss->overflowed)
		s->memcg_signature = 0;
	s->memcg_fresh = true;
	return 0;
}

static const struct memcg_record *find_record(const struct cgroup_state *s, uint64_t ino, bool v1)
{
	const struct memcg_record key = { .id = ino };

	/* Inode numbers of two hierarchies may meet: only the walked tree's. */
	if (s->n_memcg == 0 || v1 == s->memcg_v2)
		return NULL;
	return bsearch(&key, s->memcg, s->n_memcg, sizeof(*s->memcg), cmp_id);
}

bool cgroup_bpf_watermark(const struct cgroup_state *s, uint64_t key, uint64_t *bytes)
{
	const struct memcg_record *rec;

	if (!s->memcg_fresh)
		return false;
	rec = find_record(s, key & ~KEY_V1, (key & KEY_V1) != 0);
	/* The hierarchy's root has no peak file to stand for. */
	if (!rec || rec->level == 0)
		return false;
	*bytes = rec->watermark_pages * s->page_size;
	return true;
}

/* PAGE_COUNTER_MAX, which cgroup2's memory.max and memory.high print as "max". */
static bool is_page_counter_max(const struct cgroup_state *s, uint64_t pages)
{
	return pages >= (uint64_t)LONG_MAX / s->page_size;
}

bool cgroup_bpf_lookup(const struct cgroup_state *s, uint64_t ino, bool v1, struct cgroup_mem *m)
{
	const struct memcg_record *rec = find_record(s, ino, v1);

	/* The hierarchy's root sums its usage from statistics, not its page counter. */
	if (!rec || rec->level == 0)
		return false;
	if (s->memcg_v2) {
		struct cgroup_v2_counters c = {
			.usage = rec->usage_pages * s->page_size,
			.max = rec->max_pages * s->page_size,
			.high = rec->high_pages * s->page_size,
			.max_is_max = is_page_counter_max(s, rec->max_pages),
			.high_is_max = is_page_counter_max(s, rec->high_pages),
			.events_present = rec->events_present,
		};

		memcpy(c.events, rec->events, sizeof(c.events));
		cgroup_mem_set_v2_counters(m, &c);
	} else {
		struct cgroup_v1_counters c = {
			.usage = rec->usage_pages * s->page_size,
			.limit = rec->max_pages * s->page_size,
			.failcnt = rec->failcnt,
			.oom_kill = rec->events[MEMCG_RECORD_EVENT_OOM_KILL],
			.has_oom_kill = (rec->events_present & (1u << MEMCG_RECORD_EVENT_OOM_KILL)) != 0,
			.has_under_oom = true,
			.under_oom = rec->under_oom != 0,
		};

		cgroup_mem_set_v1_counters(m, &c);
	}
	return true;
}
