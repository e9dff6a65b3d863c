// SPDX-License-Identifier: GPL-2.0
/* cgroup.controllers text -> the two readers that look for "memory" in it:
 * cgroup_v2_has_memory() (a mount point's path) and
 * cgroup_dir_has_memory_controller() (a cgroup directory's fd). The input is
 * written to a cgroup.controllers file in a private temporary directory. */
#include <fcntl.h>
#include <unistd.h>
#include "cgroup_mounts.h"
#include "cgroup_walk.h"
#include "fuzz.h"

static char dir[] = "/tmp/fuzz-controllers.XXXXXX";
static char path[sizeof(dir) + 32];
static int dfd = -1;
static char *buf;

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

/* Whether "memory" is one of the words, words split at any of seps. */
static bool has_word(const uint8_t *data, size_t size, const char *seps)
{
	size_t i = 0;

	while (i < size) {
		size_t start = i;

		while (i < size && !strchr(seps, data[i]))
			i++;
		if (i - start == 6 && memcmp(data + start, "memory", 6) == 0)
			return true;
		i++;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd;
	bool by_path, by_fd;

	if (dfd < 0) {
		FUZZ_CHECK(mkdtemp(dir) != NULL);
		snprintf(path, sizeof(path), "%s/cgroup.controllers", dir);
		atexit(cleanup);
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		buf = malloc(CGROUP_READ_BUF_SIZE);
		FUZZ_CHECK(dfd >= 0 && buf);
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(write(fd, data, size) == (ssize_t)size);
	close(fd);

	by_path = cgroup_v2_has_memory(dir);
	by_fd = cgroup_dir_has_memory_controller(dfd, buf);
	/* The kernel separates controllers with spaces and ends with a newline;
	 * past a NUL byte the C-string readers see nothing, and read_full_file()
	 * refuses 4 KiB or more. */
	if (!memchr(data, '\0', size)) {
		if (size < 4000)
			FUZZ_CHECK(by_path == has_word(data, size, " \n"));
		FUZZ_CHECK(by_fd == has_word(data, size, " \t\n"));
	}
	return 0;
}
