/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What start checks before it sets an area up, and the mkfs command of a
 * zram or brd area and its trial (area_precheck.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "area_precheck.h"
#include "copy/copy_spawn.h"
#include "parse/area_facts.h"
#include "shared/spawn_helper.h"
#include "shared/units.h"

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

void area_mkfs_init(struct area_mkfs *c, const char *fs, uint64_t nr_inodes, const char *device,
		    uint64_t trial_blocks)
{
	size_t n = 0;

	snprintf(c->prog, sizeof(c->prog), "mkfs.%s", fs);
	snprintf(c->inodes, sizeof(c->inodes), "%" PRIu64, nr_inodes);
	snprintf(c->blocks, sizeof(c->blocks), "%" PRIu64, trial_blocks);
	c->argv[n++] = c->prog;
	if (area_fstype_is_ext(fs)) {
		char *ext[] = { "-q", "-F", "-b", STRINGIFY(AREA_EXT_BLOCK_SIZE), "-I",
				STRINGIFY(AREA_EXT_INODE_SIZE), "-m", STRINGIFY(AREA_EXT_RESERVED_PERCENT),
				"-N", c->inodes, "-E", "nodiscard,lazy_itable_init=0", "-O",
				strcmp(fs, "ext4") == 0 ? "^has_journal" : "^resize_inode" };

		if (trial_blocks)
			c->argv[n++] = "-n";
		for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++)
			c->argv[n++] = ext[i];
	}
	c->argv[n++] = (char *)device;
	if (trial_blocks && area_fstype_is_ext(fs))
		c->argv[n++] = c->blocks;
	c->argv[n] = NULL;
}

/* Drops the leading lines of @err that are warnings ("warning: Unable to
 * get device geometry for /dev/null"): the reason of a failure follows. */
static void skip_warnings(char *err)
{
	char *nl;

	while (strncmp(err, "warning: ", 9) == 0 && (nl = strchr(err, '\n')))
		memmove(err, nl + 1, strlen(nl + 1) + 1);
}

int area_run_helper(char *const argv[], char *err, size_t errlen)
{
	char prog[PATH_MAX];
	int p[2], st = 0, r;
	ssize_t n;
	pid_t pid;

	err[0] = '\0';
	if ((r = spawn_find_program(argv[0], prog, sizeof(prog))) < 0)
		return r;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	r = spawn_start(prog, argv, &(struct spawn_fd){ .fd = p[1], .target = STDERR_FILENO }, 1, 0, &pid);
	close(p[1]);
	if (r == 0) {
		size_t got = 0;

		/* to its end: a warning may come in a write of its own */
		while (got < errlen - 1 && (n = read(p[0], err + got, errlen - 1 - got)) != 0)
			if (n > 0)
				got += (size_t)n;
			else if (errno != EINTR)
				break;
		spawn_wait(pid, &st);
		err[got] = '\0';
		skip_warnings(err);
		err[strcspn(err, "\n")] = '\0';
		r = WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
	}
	close(p[0]);
	return r;
}

char *area_brd_hint(char *buf, size_t len, uint64_t size_bytes)
{
	uint64_t kib = (size_bytes + 1023) / 1024;

	if (!size_bytes)
		snprintf(buf, len, "load it (modprobe brd) or use backend = tmpfs or backend = zram");
	else
		snprintf(buf, len,
			 "load it with 'modprobe brd rd_nr=1 rd_size=%" PRIu64
			 "' or boot with ramdisk_size=%" PRIu64 "; or use backend = tmpfs or backend = zram",
			 kib, kib);
	return buf;
}

int area_precheck(const struct area_config *a, const struct area_sizing *sz,
		  const struct sysinfo_memory *mem, char *why, size_t len)
{
	uint64_t avail = sysinfo_memory_room(mem);
	struct copy_result res;
	struct statfs f;
	char prog[PATH_MAX], x[24], y[24];
	unsigned own;
	int r;

	if (sz && !a->force && avail && sz->size_bytes > avail) {
		snprintf(why, len, "area '%s': size %s is above RAM + swap (%s): lower size= or set force = yes",
			 a->name, units_format_size(sz->size_bytes, x, sizeof(x)),
			 units_format_size(avail, y, sizeof(y)));
		return -ENOMEM;
	}
	/* an area that cannot be seeded or synced back must not be half
	 * made, nor one whose changes stop could not save */
	if ((a->seed || a->persist) && (r = copy_spawn_find(prog, sizeof(prog), &res)) < 0) {
		snprintf(why, len, "area '%s': %s", a->name, res.msg);
		return r;
	}
	if (a->backend == AREA_BRD && access(AREA_BRD_SYSFS, F_OK) < 0) {
		snprintf(why, len, "area '%s': brd driver not present: %s", a->name,
			 area_brd_hint(prog, sizeof(prog), sz ? sz->size_bytes : 0));
		return -ENODEV;
	}
	own = AREA_OVERLAY_OWN_INODES + (area_fstype_is_ext(area_fstype(a)) ? 10 : 0);
	if (a->overlay && sz && sz->nr_inodes < own) {
		snprintf(why, len, "area '%s': seed = overlay takes %u inodes before anything is written (the overlay's directories, storaged's sync stamp and clock), but the area has %" PRIu64 ": raise inodes= or use inodes = auto (%s:%u)",
			 a->name, own, sz->nr_inodes, a->file ? a->file : "storaged.conf", a->line);
		return -ENOSPC;
	}
	/* no overlay over an overlay: a kernel without overlayfs is said
	 * when the mount fails (mount(2) loads its module first) */
	if (a->overlay && statfs(a->path, &f) == 0 && f.f_type == OVERLAYFS_SUPER_MAGIC) {
		snprintf(why, len, "area '%s': seed = overlay: '%s' is itself on an overlay filesystem, which cannot be the lower layer of another here: set seed = yes",
			 a->name, a->path);
		return -EINVAL;
	}
	return 0;
}
