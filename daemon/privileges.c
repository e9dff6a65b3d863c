// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "fileio.h"
#include "log.h"
#include "privileges.h"

static int last_cap(void)
{
	char *text = NULL;
	int v = CAP_LAST_CAP;

	if (read_full_file("/proc/sys/kernel/cap_last_cap", 64, &text, NULL) == 0) {
		if (sscanf(text, "%d", &v) != 1)
			v = CAP_LAST_CAP;
		free(text);
	}
	return v;
}

bool bpf_privileged(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };
	uint64_t eff, bpf = 1ULL << CAP_BPF | 1ULL << CAP_PERFMON;

	if (syscall(SYS_capget, &hdr, data) < 0)
		return false;
	eff = (uint64_t)data[0].effective | (uint64_t)data[1].effective << 32;
	return (eff & bpf) == bpf || (eff & 1ULL << CAP_SYS_ADMIN);
}

int drop_capabilities(uint64_t extra)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };
	uint64_t keep = 0, have;
	int top = last_cap(), cap;

	if (syscall(SYS_capget, &hdr, data) < 0)
		return -errno;
	have = (uint64_t)data[0].permitted | (uint64_t)data[1].permitted << 32;
	if (top >= CAP_BPF)
		keep = 1ULL << CAP_BPF | 1ULL << CAP_PERFMON;
	else
		keep = 1ULL << CAP_SYS_ADMIN;
	keep |= extra;
	keep &= have;
	if (have == keep)
		return 0;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	/* The bounding set first: dropping from it needs CAP_SETPCAP, which goes next. */
	for (cap = 0; cap <= top && cap < 64; cap++)
		if (!(keep & 1ULL << cap))
			prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
	data[0].effective = data[0].permitted = (uint32_t)keep;
	data[1].effective = data[1].permitted = (uint32_t)(keep >> 32);
	data[0].inheritable = data[1].inheritable = 0;
	if (syscall(SYS_capset, &hdr, data) < 0)
		return -errno;
	log_info("Dropped capabilities; keeping %s%s",
		 keep & 1ULL << CAP_BPF ? "CAP_BPF and CAP_PERFMON" :
		 keep & 1ULL << CAP_SYS_ADMIN ? "CAP_SYS_ADMIN (kernel without CAP_BPF)" : "none",
		 keep & 1ULL << CAP_DAC_READ_SEARCH ? ", and CAP_DAC_READ_SEARCH for the container runtimes' state" : "");
	return 0;
}
