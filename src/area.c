/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * RAM build areas: backend, seed, bind, sync back, teardown.  See area.h for
 * the contracts and DESIGN.md ("Faults and bad input") for the rules.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "area.h"
#include "copy_spawn.h"
#include "state.h"
#include "units.h"

#define SYNC_NEW COPY_SKIP_PREFIX "NEW"
#define SYNC_PREFIX COPY_SKIP_PREFIX
#define ZRAM_CONTROL "/sys/class/zram-control"

extern char **environ;

/* The directories of one area under the state directory. */
struct area_dirs {
	char *top, *state, *area, *lower;
};

/* Progress of area_setup(), so that a failure undoes exactly what was done. */
struct setup {
	const struct area_config *a;
	const struct area_sizing *sz;
	struct area_dirs d;
	struct state_area st;
	int path_fd; /* O_PATH of a->path, opened without following symlinks */
	bool made_top, area_mounted, lower_bound, path_bound;
};

/* ------------------------------------------------------------ small helpers */

static uint64_t now_usec(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;
	int r = 0;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0)
		r = -errno;
	else if ((size_t)n != strlen(s))
		r = -EIO;
	close(fd);
	return r;
}

static int read_str(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static const char *fmt_bytes(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "KMGTPE";
	double d = (double)v / 1024;
	unsigned i = 0;

	if (v < 1024) {
		snprintf(buf, len, "%" PRIu64 "B", v);
		return buf;
	}
	while (d >= 1023.95 && i < sizeof(units) - 2) {
		d /= 1024;
		i++;
	}
	snprintf(buf, len, "%.1f%c", d, units[i]);
	return buf;
}

static bool name_is_valid(const char *name)
{
	return name && *name && !strchr(name, '/') && strcmp(name, ".") != 0 &&
	       strcmp(name, "..") != 0 && strlen(name) < NAME_MAX;
}

static void area_dirs_done(struct area_dirs *d)
{
	free(d->top);
	free(d->state);
	free(d->area);
	free(d->lower);
	*d = (struct area_dirs){ 0 };
}

static int area_dirs_init(struct area_dirs *d, const char *state_dir, const char *name)
{
	*d = (struct area_dirs){ 0 };
	if (!name_is_valid(name))
		return -EINVAL;
	if (asprintf(&d->top, "%s/areas/%s", state_dir, name) < 0)
		d->top = NULL;
	if (!d->top || asprintf(&d->state, "%s/state", d->top) < 0 ||
	    asprintf(&d->area, "%s/area", d->top) < 0 || asprintf(&d->lower, "%s/lower", d->top) < 0) {
		area_dirs_done(d);
		return -ENOMEM;
	}
	return 0;
}

/* Opens @path as O_PATH without following any symlink in any component. */
static int open_path_nofollow(const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

/* true when @path is the root of a mount and on the same filesystem as @ref */
static bool is_mount_of(const char *path, const char *ref)
{
	struct statx a, b;

	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &a) < 0)
		return false;
	if (!(a.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) ||
	    !(a.stx_attributes & STATX_ATTR_MOUNT_ROOT))
		return false;
	if (!ref)
		return true;
	if (statx(AT_FDCWD, ref, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &b) < 0)
		return false;
	return a.stx_dev_major == b.stx_dev_major && a.stx_dev_minor == b.stx_dev_minor;
}

static int mkdir_if_missing(const char *path, mode_t mode)
{
	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static uint64_t meminfo_field(const char *key)
{
	char line[256];
	uint64_t v = 0;
	size_t klen = strlen(key);
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			/* "MemTotal:       24576000 kB" (proc(5)) */
			char *num = line + klen + 1, *end;

			num += strspn(num, " \t");
			end = num + strspn(num, "0123456789");
			*end = '\0';
			if (units_parse_uint(num, UINT64_MAX / 1024, &v) == 0)
				v *= 1024;
			else
				v = 0;
			break;
		}
	fclose(f);
	return v;
}

uint64_t area_mem_available(void)
{
	return meminfo_field("MemAvailable") + meminfo_field("SwapFree");
}

uint64_t area_mem_total(void)
{
	return meminfo_field("MemTotal");
}

/* ------------------------------------------------------------ rm -rf */

/* Removes @name below @dirfd recursively; never follows symlinks, never
 * crosses into another filesystem (-EBUSY). */
static int rm_rf_at(int parent, const char *name, dev_t dev)
{
	struct stat st;
	struct dirent *de;
	DIR *dir;
	int fd, r = 0;

	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (st.st_dev != dev)
		return -EBUSY;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(parent, name, 0) < 0 && errno != ENOENT ? -errno : 0;
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return -errno;
	}
	while (r == 0 && (de = readdir(dir)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			r = rm_rf_at(dirfd(dir), de->d_name, dev);
	closedir(dir);
	if (r == 0 && unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		r = -errno;
	return r;
}

/* ------------------------------------------------------------ survey */

struct survey_link {
	dev_t dev;
	ino_t ino;
	uint64_t bytes;
};

struct survey_walk {
	struct area_survey *s;
	dev_t dev;
	struct survey_link *links; /* inodes with nlink > 1, once per name */
	size_t n_links, cap_links;
};

static int survey_add_link(struct survey_walk *w, const struct stat *st)
{
	if (w->n_links == w->cap_links) {
		size_t cap = w->cap_links ? w->cap_links * 2 : 256;
		void *nv = realloc(w->links, cap * sizeof(*w->links));

		if (!nv)
			return -ENOMEM;
		w->links = nv;
		w->cap_links = cap;
	}
	w->links[w->n_links].dev = st->st_dev;
	w->links[w->n_links].ino = st->st_ino;
	w->links[w->n_links++].bytes = (uint64_t)st->st_blocks * 512;
	return 0;
}

static int survey_dir(struct survey_walk *w, int fd, bool top);

static int survey_entry(struct survey_walk *w, int dirfd, const char *name)
{
	struct stat st;
	int fd;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) && st.st_nlink > 1)
		return survey_add_link(w, &st);
	w->s->inodes++;
	w->s->bytes += (uint64_t)st.st_blocks * 512;
	if (!S_ISDIR(st.st_mode) || st.st_dev != w->dev)
		return 0;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return survey_dir(w, fd, false);
}

/* walks the directory @fd (consumed) */
static int survey_dir(struct survey_walk *w, int fd, bool top)
{
	struct dirent *de;
	DIR *dir = fdopendir(fd);
	int r = 0;

	if (!dir) {
		close(fd);
		return -errno;
	}
	while (r == 0 && (de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (top && strncmp(de->d_name, SYNC_PREFIX, strlen(SYNC_PREFIX)) == 0)
			continue;
		r = survey_entry(w, dirfd(dir), de->d_name);
	}
	closedir(dir);
	return r;
}

static int link_cmp(const void *x, const void *y)
{
	const struct survey_link *a = x, *b = y;

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return a->ino < b->ino ? -1 : a->ino > b->ino;
}

int area_survey_path(const char *path, struct area_survey *ret)
{
	struct area_survey s = { .inodes = 1 };
	struct survey_walk w = { .s = &s };
	struct stat st;
	int fd, r;

	fd = open_path_nofollow(path, O_RDONLY | O_DIRECTORY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		r = fd < 0 ? fd : -errno;
		goto out;
	}
	w.dev = st.st_dev;
	s.bytes = (uint64_t)st.st_blocks * 512;
	r = survey_dir(&w, fd, true);
	if (r == 0 && w.n_links)
		qsort(w.links, w.n_links, sizeof(*w.links), link_cmp);
	for (size_t i = 0; r == 0 && i < w.n_links; i++)
		if (i == 0 || link_cmp(&w.links[i], &w.links[i - 1]) != 0) {
			s.inodes++;
			s.bytes += w.links[i].bytes;
		}
out:
	free(w.links);
	s.valid = r == 0;
	s.error = r;
	if (r < 0)
		s.bytes = s.inodes = 0;
	*ret = s;
	return r;
}

/* ------------------------------------------------------------ state file */

/* Opens and locks (LOCK_EX) the state file of @name; returns the fd. */
static int area_record_open_locked(const struct area_dirs *d, struct state_area *st)
{
	int fd = open(d->state, O_RDWR | O_CLOEXEC | O_NOFOLLOW), r;

	if (fd < 0)
		return -errno;
	r = flock(fd, LOCK_EX) < 0 ? -errno : state_area_read_fd(fd, st);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

/* ------------------------------------------------------------ helpers run by argv */

static const char *find_program(const char *name, char *buf, size_t len)
{
	static const char *const dirs[] = { "/usr/sbin", "/sbin", "/usr/bin", "/bin" };

	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		snprintf(buf, len, "%s/%s", dirs[i], name);
		if (access(buf, X_OK) == 0)
			return buf;
	}
	return NULL;
}

/* Runs @argv (argv[0] a bare program name) with a clean environment, stdin
 * and stdout on /dev/null; its stderr's first line lands in @err. */
static int run_helper(char *const argv[], char *err, size_t errlen)
{
	static char *const envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL };
	posix_spawn_file_actions_t fa;
	char prog[PATH_MAX];
	int p[2], st, r;
	ssize_t n = 0;
	pid_t pid;

	err[0] = '\0';
	if (!find_program(argv[0], prog, sizeof(prog)))
		return -ENOENT;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 2);
	r = -posix_spawn(&pid, prog, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (r == 0) {
		n = read(p[0], err, errlen - 1);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		err[n > 0 ? n : 0] = '\0';
		err[strcspn(err, "\n")] = '\0';
		r = WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
	}
	close(p[0]);
	return r;
}

/* ------------------------------------------------------------ backends */

static int tmpfs_mount(struct setup *s, const struct stat *root, struct diag_list *m)
{
	char opts[160];

	snprintf(opts, sizeof(opts), "size=%" PRIu64 ",nr_inodes=%" PRIu64 ",mode=%04o,uid=%u,gid=%u",
		 s->sz->size_bytes, s->sz->nr_inodes,
		 s->a->mode_set ? s->a->mode : (unsigned)(root->st_mode & 07777),
		 s->a->uid_set ? s->a->uid : root->st_uid, s->a->gid_set ? s->a->gid : root->st_gid);
	if (mount(s->st.device, s->d.area, "tmpfs", 0, opts) < 0) {
		int r = -errno;

		diag_error(m, NULL, 0, "area '%s': mounting tmpfs (%s) on '%s': %s", s->a->name, opts,
			   s->d.area, strerror(-r));
		return r;
	}
	s->area_mounted = true;
	return 0;
}

static int zram_sysfs(int id, const char *attr, const char *val, struct diag_list *m)
{
	char p[96];
	int r;

	snprintf(p, sizeof(p), "/sys/block/zram%d/%s", id, attr);
	r = write_str(p, val);
	if (r < 0)
		diag_error(m, NULL, 0, "zram%d: %s: %s", id, attr, strerror(-r));
	return r;
}

/* asks the kernel for a new zram device; its number is what hot_add returns */
static int zram_hot_add(struct diag_list *m, const char *name)
{
	uint64_t id;
	char buf[32];
	int r = read_str(ZRAM_CONTROL "/hot_add", buf, sizeof(buf));

	if (r < 0) {
		diag_error(m, NULL, 0, "area '%s': %s/hot_add: %s: is the zram driver built in or loaded?",
			   name, ZRAM_CONTROL, strerror(-r));
		return r;
	}
	buf[strcspn(buf, "\n")] = '\0';
	if (units_parse_uint(buf, INT32_MAX, &id) < 0) {
		diag_error(m, NULL, 0, "area '%s': %s/hot_add returned '%s'", name, ZRAM_CONTROL, buf);
		return -EIO;
	}
	return (int)id;
}

static void zram_release(int id)
{
	char n[16];

	snprintf(n, sizeof(n), "%d", id);
	zram_sysfs(id, "reset", "1", &(struct diag_list){ 0 });
	write_str(ZRAM_CONTROL "/hot_remove", n);
}

/* checks that /dev/zramN is the block device the kernel says zramN is */
static int check_devnode(const char *dev, const char *sysname, struct diag_list *m)
{
	char p[96], buf[32];
	struct stat st;
	unsigned maj, min;

	snprintf(p, sizeof(p), "/sys/block/%s/dev", sysname);
	if (read_str(p, buf, sizeof(buf)) < 0 || sscanf(buf, "%u:%u", &maj, &min) != 2 ||
	    stat(dev, &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != makedev(maj, min)) {
		diag_error(m, NULL, 0, "%s: device node '%s' is missing or is not %s (%s)", sysname,
			   dev, sysname, buf);
		return -ENODEV;
	}
	return 0;
}

static int make_fs(struct setup *s, struct diag_list *m)
{
	char mkfs[32], n[24], err[256];
	const char *fs = s->st.fs;
	bool ext = strncmp(fs, "ext", 3) == 0;
	char *ext_argv[] = { mkfs, "-q", "-F", "-b", "4096", "-I", "256", "-m", "0", "-N", n,
			     "-E", "nodiscard,lazy_itable_init=0", "-O",
			     strcmp(fs, "ext4") == 0 ? "^has_journal" : "^resize_inode",
			     s->st.device, NULL };
	char *other_argv[] = { mkfs, s->st.device, NULL };
	int r;

	snprintf(mkfs, sizeof(mkfs), "mkfs.%s", fs);
	snprintf(n, sizeof(n), "%" PRIu64, s->sz->nr_inodes);
	r = run_helper(ext ? ext_argv : other_argv, err, sizeof(err));
	if (r < 0)
		diag_error(m, NULL, 0, "%s: %s failed: %s", s->st.device + 5, mkfs,
			   r == -ENOENT ? "program not found: install it or choose another fs =" :
			   err[0] ? err : strerror(-r));
	return r;
}

static int blockdev_mount(struct setup *s, const struct stat *root, struct diag_list *m)
{
	char lf[PATH_MAX];
	int r;

	if (mount(s->st.device, s->d.area, s->st.fs, 0, NULL) < 0) {
		r = -errno;
		diag_error(m, NULL, 0, "%s: mounting %s on '%s': %s", s->st.device + 5, s->st.fs,
			   s->d.area, strerror(-r));
		return r;
	}
	s->area_mounted = true;
	/* lost+found would be synced back into the directory */
	snprintf(lf, sizeof(lf), "%s/lost+found", s->d.area);
	rmdir(lf);
	if (chown(s->d.area, s->a->uid_set ? s->a->uid : root->st_uid,
		  s->a->gid_set ? s->a->gid : root->st_gid) < 0 ||
	    chmod(s->d.area, s->a->mode_set ? s->a->mode : (root->st_mode & 07777)) < 0) {
		r = -errno;
		diag_error(m, NULL, 0, "area '%s': setting owner and mode of '%s': %s", s->a->name,
			   s->d.area, strerror(-r));
		return r;
	}
	return 0;
}

static int zram_create(struct setup *s, const struct stat *root, struct diag_list *m)
{
	char size[24], sysname[24];
	int id = zram_hot_add(m, s->a->name), r;

	if (id < 0)
		return id;
	s->st.zram_id = id;
	s->st.zram_created = true;
	snprintf(sysname, sizeof(sysname), "zram%d", id);
	if (asprintf(&s->st.device, "/dev/%s", sysname) < 0) {
		s->st.device = NULL;
		return -ENOMEM;
	}
	/* written ahead: a setup killed from here on leaves the device's
	 * number for recover_interrupted() to release */
	r = state_area_write(s->d.state, &s->st);
	if (r < 0)
		return r;
	snprintf(size, sizeof(size), "%" PRIu64, s->sz->size_bytes);
	r = zram_sysfs(id, "disksize", size, m);
	if (r == 0)
		r = check_devnode(s->st.device, sysname, m);
	if (r == 0)
		r = make_fs(s, m);
	if (r == 0)
		r = blockdev_mount(s, root, m);
	return r;
}

#define BRD_HINT "load it with 'modprobe brd rd_nr=1 rd_size=%" PRIu64 "' or boot with ramdisk_size=%" PRIu64 "; or use backend = tmpfs or backend = zram"

/* the first /dev/ramN nobody holds open, at least @size bytes */
static int brd_pick(struct setup *s, struct diag_list *m)
{
	uint64_t kib = (s->sz->size_bytes + 1023) / 1024, bytes = 0;
	char dev[32];

	if (access("/sys/module/brd", F_OK) < 0) {
		diag_error(m, NULL, 0, "area '%s': brd driver not present: " BRD_HINT, s->a->name, kib, kib);
		return -ENODEV;
	}
	for (int i = 0; i < 256; i++) {
		int fd;

		snprintf(dev, sizeof(dev), "/dev/ram%d", i);
		fd = open(dev, O_RDONLY | O_EXCL | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (ioctl(fd, BLKGETSIZE64, &bytes) < 0)
			bytes = 0;
		close(fd);
		if (bytes >= s->sz->size_bytes)
			return (s->st.device = strdup(dev)) ? 0 : -ENOMEM;
	}
	diag_error(m, NULL, 0, "area '%s': no free /dev/ramN of at least %" PRIu64 " KiB: " BRD_HINT,
		   s->a->name, kib, kib, kib);
	return -ENOSPC;
}

static int brd_create(struct setup *s, const struct stat *root, struct diag_list *m)
{
	int r = brd_pick(s, m);

	if (r == 0)
		r = make_fs(s, m);
	if (r == 0)
		r = blockdev_mount(s, root, m);
	return r;
}

/* ------------------------------------------------------------ checks */

static int check_limits(struct setup *s, struct diag_list *m)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t want = (s->sz->size_bytes + page - 1) / page * page, got_b, got_i;
	struct statvfs v;
	bool ok;

	if (statvfs(s->d.area, &v) < 0)
		return -errno;
	got_b = (uint64_t)v.f_blocks * v.f_frsize;
	got_i = v.f_files;
	if (s->a->backend == AREA_TMPFS)
		ok = got_b == want && got_i == s->sz->nr_inodes;
	else
		ok = got_b <= want && (strncmp(s->st.fs, "ext", 3) || got_i >= s->sz->nr_inodes);
	if (!ok) {
		diag_error(m, NULL, 0, "area '%s' (%s): effective limits %" PRIu64 " bytes, %" PRIu64 " inodes differ from the requested size=%" PRIu64 ", nr_inodes=%" PRIu64,
			   s->a->name, s->st.device, got_b, got_i, s->sz->size_bytes, s->sz->nr_inodes);
		return -EIO;
	}
	return 0;
}

/* after mkfs the real free space is known: the seed must fit into it */
static int check_room(struct setup *s, const struct area_survey *sv, struct diag_list *m)
{
	struct statvfs v;
	uint64_t free_b, free_i;
	char a[16], b[16];

	if (!s->a->seed || s->a->backend == AREA_TMPFS)
		return 0;
	if (statvfs(s->d.area, &v) < 0)
		return -errno;
	free_b = (uint64_t)v.f_bavail * v.f_frsize;
	free_i = v.f_favail;
	if (sv->bytes <= free_b && sv->inodes <= free_i + 1)
		return 0;
	diag_error(m, NULL, 0, "area '%s' (%s): seed needs %s and %" PRIu64 " inodes but %s has %s and %" PRIu64 " inodes free after mkfs: raise size= or inodes=",
		   s->a->name, s->st.device, fmt_bytes(sv->bytes, a, sizeof(a)), sv->inodes,
		   s->st.fs, fmt_bytes(free_b, b, sizeof(b)), free_i + 1);
	return -ENOSPC;
}

static int check_memory(const struct area_config *a, const struct area_sizing *sz, struct diag_list *m)
{
	uint64_t avail = area_mem_available();
	char x[16], y[16];

	if (a->force || avail == 0 || sz->size_bytes <= avail)
		return 0;
	diag_error(m, NULL, 0, "area '%s': size %s is above available memory + swap (%s): lower size= or set force = yes",
		   a->name, fmt_bytes(sz->size_bytes, x, sizeof(x)), fmt_bytes(avail, y, sizeof(y)));
	return -ENOMEM;
}

/* before anything is set up: an area that cannot be seeded or synced back
 * must not be half made, nor one whose changes stop could not save */
static int check_helper(const struct area_config *a, struct diag_list *m)
{
	struct copy_result res;
	char prog[PATH_MAX];
	int r;

	if (!a->seed && !a->persist)
		return 0;
	r = copy_spawn_find(prog, sizeof(prog), &res);
	if (r < 0)
		diag_error(m, NULL, 0, "area '%s': %s", a->name, res.msg);
	return r;
}

/* ------------------------------------------------------------ open files */

static bool link_is_below(const char *link, const char *path)
{
	size_t n = strlen(path);

	return strncmp(link, path, n) == 0 && (link[n] == '/' || link[n] == '\0');
}

static bool pid_holds_path(int pidfd, const char *path)
{
	char link[PATH_MAX];
	struct dirent *de;
	bool found = false;
	int fd = openat(pidfd, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	ssize_t n;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	while (!found && (de = readdir(d))) {
		n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		found = link_is_below(link, path);
	}
	closedir(d);
	return found;
}

/* warns about every process holding a file open under @path */
static void warn_open_files(const char *name, const char *path, struct diag_list *m)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;
	char comm[64];

	if (!proc)
		return;
	while ((de = readdir(proc))) {
		int pidfd;

		uint64_t pid;

		if (units_parse_uint(de->d_name, INT32_MAX, &pid) < 0 || pid == (uint64_t)getpid())
			continue;
		pidfd = openat(dirfd(proc), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (pidfd < 0)
			continue;
		if (pid_holds_path(pidfd, path)) {
			int cfd = openat(pidfd, "comm", O_RDONLY | O_CLOEXEC);
			ssize_t n = cfd < 0 ? -1 : read(cfd, comm, sizeof(comm) - 1);

			comm[n > 0 ? n : 0] = '\0';
			comm[strcspn(comm, "\n")] = '\0';
			if (cfd >= 0)
				close(cfd);
			diag_warning(m, NULL, 0, "area '%s': pid %s (%s) has files open under %s: its writes go to the hidden copy",
				     name, de->d_name, comm, path);
		}
		close(pidfd);
	}
	closedir(proc);
}

/* ------------------------------------------------------------ setup */

/* A storaged killed while copying leaves storaged-copy and its workers
 * dying (they hold a shared flock() on the area's root until then, see
 * storaged-copy.c): waiting for them keeps the umounts from failing busy. */
static void wait_for_copy(const char *area)
{
	int fd;

	if (!is_mount_of(area, NULL))
		return;
	fd = open(area, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	while (flock(fd, LOCK_EX) < 0 && errno == EINTR)
		;
	close(fd);
}

static void setup_undo(struct setup *s)
{
	/* an interrupted seed: the helper's workers may still be dying */
	if (s->area_mounted)
		wait_for_copy(s->d.area);
	if (s->path_bound)
		umount2(s->a->path, UMOUNT_NOFOLLOW);
	if (s->lower_bound)
		umount2(s->d.lower, UMOUNT_NOFOLLOW);
	if (s->area_mounted && umount2(s->d.area, UMOUNT_NOFOLLOW) < 0)
		umount2(s->d.area, UMOUNT_NOFOLLOW | MNT_DETACH);
	if (s->st.zram_created)
		zram_release(s->st.zram_id);
	if (s->made_top) {
		unlink(s->d.state);
		rmdir(s->d.area);
		rmdir(s->d.lower);
		rmdir(s->d.top);
	}
}

static int setup_dirs(struct setup *s, const char *state_dir, struct diag_list *m)
{
	_cleanup_free_ char *areas = NULL;
	int r;

	if (asprintf(&areas, "%s/areas", state_dir) < 0)
		return -ENOMEM;
	if ((r = mkdir_if_missing(state_dir, 0755)) < 0 || (r = mkdir_if_missing(areas, 0700)) < 0)
		goto fail;
	if (mkdir(s->d.top, 0700) < 0) {
		r = -errno;
		goto fail;
	}
	s->made_top = true;
	if (mkdir(s->d.area, 0700) < 0 || mkdir(s->d.lower, 0700) < 0) {
		r = -errno;
		goto fail;
	}
	return 0;
fail:
	diag_error(m, NULL, 0, "area '%s': creating '%s': %s%s", s->a->name, s->d.top, strerror(-r),
		   r == -EEXIST ? ": a previous run left it: run 'storaged stop' first" : "");
	return r;
}

static int setup_backend(struct setup *s, const struct stat *root, struct diag_list *m)
{
	int r;

	if (s->a->backend == AREA_TMPFS) {
		if (asprintf(&s->st.device, "storaged-%s", s->a->name) < 0) {
			s->st.device = NULL;
			return -ENOMEM;
		}
		r = tmpfs_mount(s, root, m);
	} else if (s->a->backend == AREA_ZRAM)
		r = zram_create(s, root, m);
	else
		r = brd_create(s, root, m);
	if (r == 0 && mount(NULL, s->d.area, NULL, MS_PRIVATE, NULL) < 0)
		r = -errno;
	if (r == 0)
		r = check_limits(s, m);
	return r;
}

static int bind_fd(int fd, const char *target, bool private)
{
	char src[64];

	snprintf(src, sizeof(src), "/proc/self/fd/%d", fd);
	if (mount(src, target, NULL, MS_BIND, NULL) < 0)
		return -errno;
	if (private && mount(NULL, target, NULL, MS_PRIVATE, NULL) < 0)
		return -errno;
	return 0;
}

static int setup_seed(struct setup *s, struct diag_list *m)
{
	struct copy_result c;
	struct statvfs v;
	int r = copy_spawn_run(s->d.lower, s->d.area, s->a->name, copy_spawn_jobs(), &c);

	if (r == 0)
		return 0;
	if (r == -ENOSPC && statvfs(s->d.area, &v) == 0)
		diag_error(m, NULL, 0, "area '%s' (%s): seeding from '%s' ran out of %s: raise %s",
			   s->a->name, s->st.device, s->a->path,
			   v.f_favail == 0 ? "inodes" : "blocks",
			   v.f_favail == 0 ? "inodes=" : "size=");
	else
		diag_error(m, NULL, 0, "area '%s' (%s): seeding from '%s' failed: %s", s->a->name,
			   s->st.device, s->a->path, c.msg);
	return r;
}

/* root of the area: owner and mode of the directory, or the configured ones */
static int setup_root(struct setup *s, const struct stat *root)
{
	if (chown(s->d.area, s->a->uid_set ? s->a->uid : root->st_uid,
		  s->a->gid_set ? s->a->gid : root->st_gid) < 0)
		return -errno;
	if (chmod(s->d.area, s->a->mode_set ? s->a->mode : (root->st_mode & 07777)) < 0)
		return -errno;
	return 0;
}

static int setup_state_init(struct setup *s)
{
	s->st.name = strdup(s->a->name);
	s->st.path = strdup(s->a->path);
	s->st.fs = strdup(s->a->backend == AREA_TMPFS ? "tmpfs" : s->a->fs ? s->a->fs : "ext4");
	s->st.backend = s->a->backend;
	s->st.persist = s->a->persist;
	s->st.seeded = s->a->seed;
	s->st.size_bytes = s->sz->size_bytes;
	s->st.nr_inodes = s->sz->nr_inodes;
	s->st.started_usec = now_usec(CLOCK_REALTIME);
	return s->st.name && s->st.path && s->st.fs ? 0 : -ENOMEM;
}

static bool area_is_active(const struct area_dirs *d, const char *path)
{
	return access(d->state, F_OK) == 0 && is_mount_of(path, d->area);
}

/* removes a sync left half-done by a crash (see area_sync()) */
static int recover_sync(int dirfd, dev_t dev)
{
	return rm_rf_at(dirfd, SYNC_NEW, dev);
}

/*
 * A setup killed midway (kill -9, a crash) leaves the area's directory
 * without a state file that describes an active area, and maybe the area
 * mounted, the directory's private bind, even the bind over the directory.
 * Undo what is there, so that this setup starts afresh; the directory is
 * uncovered only when what covers it is this area.
 */
static int recover_interrupted(struct setup *s, struct diag_list *m)
{
	struct state_area old = { .zram_id = -1 };
	_cleanup_free_ char *tmp = NULL;
	int fd;

	if (access(s->d.top, F_OK) < 0)
		return 0;
	fd = open(s->d.state, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		state_area_read_fd(fd, &old); /* a damaged record: @old stays empty */
		close(fd);
	}
	if (is_mount_of(s->a->path, s->d.area))
		umount2(s->a->path, UMOUNT_NOFOLLOW);
	if (is_mount_of(s->d.lower, NULL) && umount2(s->d.lower, UMOUNT_NOFOLLOW) < 0)
		umount2(s->d.lower, UMOUNT_NOFOLLOW | MNT_DETACH);
	if (is_mount_of(s->d.area, NULL) && umount2(s->d.area, UMOUNT_NOFOLLOW) < 0)
		umount2(s->d.area, UMOUNT_NOFOLLOW | MNT_DETACH);
	if (old.zram_created && old.zram_id >= 0)
		zram_release(old.zram_id);
	state_area_done(&old);
	if (asprintf(&tmp, "%s.tmp", s->d.state) < 0)
		return -ENOMEM;
	unlink(tmp);
	unlink(s->d.state);
	rmdir(s->d.area);
	rmdir(s->d.lower);
	if (rmdir(s->d.top) < 0 && errno != ENOENT)
		return diag_error(m, NULL, 0,
				  "area '%s': '%s', left by an interrupted run, cannot be removed: %s; look at what is mounted below it",
				  s->a->name, s->d.top, strerror(errno)) ?: -EBUSY;
	return diag_warning(m, NULL, 0, "area '%s': removed what an interrupted setup left in '%s'",
			    s->a->name, s->d.top);
}

static int setup_cover(struct setup *s, const struct stat *root, struct diag_list *m)
{
	int r = recover_sync(s->path_fd, root->st_dev), fd;

	if (r < 0) {
		diag_error(m, NULL, 0, "area '%s': removing the interrupted sync '%s/%s': %s",
			   s->a->name, s->a->path, SYNC_NEW, strerror(-r));
		return r;
	}
	r = bind_fd(s->path_fd, s->d.lower, true);
	if (r < 0) {
		diag_error(m, NULL, 0, "area '%s': binding '%s' on '%s': %s", s->a->name, s->a->path,
			   s->d.lower, strerror(-r));
		return r;
	}
	s->lower_bound = true;
	if (s->a->seed && (r = setup_seed(s, m)) < 0)
		return r;
	if ((r = setup_root(s, root)) < 0) {
		diag_error(m, NULL, 0, "area '%s': owner and mode of '%s': %s", s->a->name, s->d.area,
			   strerror(-r));
		return r;
	}
	warn_open_files(s->a->name, s->a->path, m);
	/* written ahead of the bind: a setup killed after it is found and
	 * undone by the next start or by stop (the area is complete here) */
	r = state_area_write(s->d.state, &s->st);
	if (r < 0) {
		diag_error(m, NULL, 0, "area '%s': writing '%s': %s", s->a->name, s->d.state, strerror(-r));
		return r;
	}
	fd = open_path_nofollow(s->d.area, O_PATH | O_DIRECTORY);
	r = fd < 0 ? fd : bind_fd(fd, s->a->path, false);
	if (fd >= 0)
		close(fd);
	if (r < 0)
		diag_error(m, NULL, 0, "area '%s': binding the area over '%s': %s", s->a->name,
			   s->a->path, strerror(-r));
	return r;
}

static int setup_steps(struct setup *s, const char *state_dir, struct diag_list *m)
{
	struct area_survey sv = { 0 };
	struct stat root;
	int r;

	if (fstat(s->path_fd, &root) < 0)
		return -errno;
	/* a ramdisk's real room is known only after mkfs: survey for check_room() */
	if (s->a->seed && s->a->backend != AREA_TMPFS &&
	    (r = area_survey_path(s->a->path, &sv)) < 0) {
		diag_error(m, NULL, 0, "area '%s': reading '%s': %s", s->a->name, s->a->path, strerror(-r));
		return r;
	}
	if ((r = setup_state_init(s)) < 0 || (r = setup_dirs(s, state_dir, m)) < 0 ||
	    (r = setup_backend(s, &root, m)) < 0 || (r = check_room(s, &sv, m)) < 0)
		return r;
	r = setup_cover(s, &root, m);
	if (r < 0)
		return r;
	s->path_bound = true;
	s->st.covered = true;
	r = state_area_write(s->d.state, &s->st);
	if (r < 0)
		diag_error(m, NULL, 0, "area '%s': writing '%s': %s", s->a->name, s->d.state, strerror(-r));
	return r;
}

int area_setup(const struct area_config *a, const struct area_sizing *sz, const char *state_dir,
	       struct diag_list *msgs)
{
	struct setup s = { .a = a, .sz = sz, .st = { .zram_id = -1 }, .path_fd = -1 };
	size_t n0 = diag_count(msgs, DIAG_ERROR);
	int r;

	if ((r = area_dirs_init(&s.d, state_dir, a->name)) < 0)
		return r;
	if (area_is_active(&s.d, a->path))
		goto out;
	if ((r = recover_interrupted(&s, msgs)) < 0)
		goto out;
	if (a->seed && !sz->fits) {
		diag_error(msgs, NULL, 0, "area '%s' (%s): %s", a->name, a->path, sz->why);
		r = -ENOSPC;
		goto out;
	}
	if ((r = check_memory(a, sz, msgs)) < 0 || (r = check_helper(a, msgs)) < 0)
		goto out;
	s.path_fd = open_path_nofollow(a->path, O_PATH | O_DIRECTORY);
	if (s.path_fd < 0) {
		r = s.path_fd;
		diag_error(msgs, NULL, 0, "area '%s': opening '%s' (symlinks are not followed): %s",
			   a->name, a->path, strerror(-r));
		goto out;
	}
	r = setup_steps(&s, state_dir, msgs);
	if (r < 0) {
		if (diag_count(msgs, DIAG_ERROR) == n0)
			diag_error(msgs, NULL, 0, "area '%s' (%s): %s", a->name, a->path, strerror(-r));
		setup_undo(&s);
	}
out:
	if (s.path_fd >= 0)
		close(s.path_fd);
	state_area_done(&s.st);
	area_dirs_done(&s.d);
	return r;
}

/* ------------------------------------------------------------ sync back */

/* moves every top-level entry of @newfd over the same name in @lowerfd */
static int sync_exchange(int lowerfd, int newfd)
{
	DIR *d = fdopendir(dup(newfd));
	struct dirent *de;
	int r = 0;

	if (!d)
		return -errno;
	while (r == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (renameat2(newfd, de->d_name, lowerfd, de->d_name, RENAME_EXCHANGE) == 0)
			continue;
		if (errno != ENOENT ||
		    renameat2(newfd, de->d_name, lowerfd, de->d_name, RENAME_NOREPLACE) < 0)
			r = -errno;
	}
	closedir(d);
	return r;
}

/* moves top-level entries of @lowerfd that the area no longer has into @newfd */
static int sync_delete(int lowerfd, int areafd, int newfd)
{
	DIR *d = fdopendir(dup(lowerfd));
	struct dirent *de;
	struct stat st;
	int r = 0;

	if (!d)
		return -errno;
	while (r == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strncmp(de->d_name, SYNC_PREFIX, strlen(SYNC_PREFIX)))
			continue;
		if (fstatat(areafd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
			continue;
		if (renameat2(lowerfd, de->d_name, newfd, de->d_name, RENAME_NOREPLACE) < 0)
			r = -errno;
	}
	closedir(d);
	return r;
}

/* the root of the directory takes the area root's owner, mode and times */
static int sync_root(int lowerfd, int areafd)
{
	struct stat st;
	struct timespec ts[2];

	if (fstat(areafd, &st) < 0)
		return -errno;
	ts[0] = st.st_atim;
	ts[1] = st.st_mtim;
	if (fchown(lowerfd, st.st_uid, st.st_gid) < 0 || fchmod(lowerfd, st.st_mode & 07777) < 0 ||
	    futimens(lowerfd, ts) < 0)
		return -errno;
	return 0;
}

/*
 * Sync back, crash-safe.  Everything happens inside the covered directory's
 * own filesystem, reached through the private bind areas/<name>/lower:
 *
 *  0. recover: delete <lower>/.storaged-sync.NEW left by an interrupted run
 *     (always safe, see 5.)
 *  1. copy the area into <lower>/.storaged-sync.NEW with full fidelity
 *  2. syncfs(): every new file is complete on disk before anything moves
 *  3. for each top-level entry E of NEW: renameat2(NEW/E, lower/E,
 *     RENAME_EXCHANGE), or RENAME_NOREPLACE when lower/E does not exist; the
 *     old version ends up in NEW/E.  One atomic step per entry: lower/E is at
 *     every instant its complete old or its complete new subtree.
 *  4. each top-level entry of lower the area no longer has is renamed into
 *     NEW (deleted in one atomic step)
 *  5. root owner/mode/times; syncfs(); delete NEW, which now holds only
 *     versions that are no longer live; syncfs().
 * A crash at any point leaves every file in lower complete, old or new, and
 * NEW holding only copies that are not live: step 0 may delete it.  The sync
 * reports success only after the last syncfs().
 */
static int sync_locked(const struct area_dirs *d, struct diag_list *m, const char *name)
{
	int lowerfd = -1, areafd = -1, newfd = -1, r;
	struct copy_result c = { 0 };
	_cleanup_free_ char *newdir = NULL;
	const char *step = "opening";
	struct stat st;

	if (asprintf(&newdir, "%s/%s", d->lower, SYNC_NEW) < 0)
		return -ENOMEM;
	lowerfd = open(d->lower, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	areafd = open(d->area, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (lowerfd < 0 || areafd < 0 || fstat(lowerfd, &st) < 0) {
		r = -errno;
		goto out;
	}
	step = "removing an interrupted sync";
	if ((r = recover_sync(lowerfd, st.st_dev)) < 0)
		goto out;
	step = "creating " SYNC_NEW;
	if (mkdirat(lowerfd, SYNC_NEW, 0700) < 0 ||
	    (newfd = openat(lowerfd, SYNC_NEW, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		r = -errno;
		goto out;
	}
	step = "copying";
	if ((r = copy_spawn_run(d->area, newdir, name, copy_spawn_jobs(), &c)) < 0)
		goto out;
	step = "syncing the copy";
	if (syncfs(lowerfd) < 0) {
		r = -errno;
		goto out;
	}
	step = "swapping in the new versions";
	if ((r = sync_exchange(lowerfd, newfd)) < 0)
		goto out;
	step = "removing deleted entries";
	if ((r = sync_delete(lowerfd, areafd, newfd)) < 0 || (r = sync_root(lowerfd, areafd)) < 0)
		goto out;
	step = "syncing";
	if (syncfs(lowerfd) < 0 || (r = recover_sync(lowerfd, st.st_dev)) < 0 || syncfs(lowerfd) < 0)
		r = r < 0 ? r : -errno;
out:
	if (r < 0)
		diag_error(m, NULL, 0, "area '%s': sync back into '%s' failed while %s: %s%s; the directory holds complete old or new versions of every file and the area is left in place: fix this and run 'storaged sync %s'",
			   name, d->lower, step, c.msg[0] ? c.msg : strerror(-r),
			   r == -ENOSPC ? " (the directory's filesystem needs room for a full copy)" : "",
			   name);
	if (newfd >= 0)
		close(newfd);
	if (lowerfd >= 0)
		close(lowerfd);
	if (areafd >= 0)
		close(areafd);
	return r;
}

int area_sync(const char *state_dir, const char *name, struct diag_list *msgs)
{
	struct area_dirs d;
	struct state_area st;
	int fd, r;

	if ((r = area_dirs_init(&d, state_dir, name)) < 0) {
		diag_error(msgs, NULL, 0, "area '%s': invalid name", name);
		return r;
	}
	fd = area_record_open_locked(&d, &st);
	if (fd < 0) {
		r = fd;
		diag_error(msgs, NULL, 0, "area '%s' is not active (%s: %s)", name, d.state, strerror(-r));
		goto out;
	}
	if (is_mount_of(d.lower, NULL) && is_mount_of(d.area, NULL))
		r = sync_locked(&d, msgs, name);
	else {
		r = -ENOENT;
		diag_error(msgs, NULL, 0, "area '%s': '%s' or '%s' is not mounted: cannot sync; run 'storaged stop' and start again",
			   name, d.area, d.lower);
	}
	state_area_done(&st);
	close(fd);
out:
	area_dirs_done(&d);
	return r;
}

/* ------------------------------------------------------------ teardown */

static int umount_one(const char *name, const char *what, const char *ref, struct diag_list *m)
{
	int r;

	if (!is_mount_of(what, ref))
		return 0;
	if (umount2(what, UMOUNT_NOFOLLOW) == 0)
		return 0;
	r = -errno;
	if (r == -EBUSY)
		warn_open_files(name, what, m);
	diag_error(m, NULL, 0, "area '%s': unmounting '%s': %s%s", name, what, strerror(-r),
		   r == -EBUSY ? ": stop the processes named above and run 'storaged stop' again" : "");
	return r;
}

static int teardown_locked(const struct area_dirs *d, struct state_area *st, bool do_sync,
			   struct diag_list *m)
{
	int r;

	/* Never sync an area nobody could write to: a setup killed while
	 * seeding holds a partial copy, and syncing it would delete files. */
	if (st->persist && do_sync && (st->covered || is_mount_of(st->path, d->area)) &&
	    is_mount_of(d->area, NULL) && is_mount_of(d->lower, NULL) &&
	    (r = sync_locked(d, m, st->name)) < 0)
		return r;
	if ((r = umount_one(st->name, st->path, d->area, m)) < 0 ||
	    (r = umount_one(st->name, d->lower, NULL, m)) < 0 ||
	    (r = umount_one(st->name, d->area, NULL, m)) < 0)
		return r;
	if (st->zram_created && st->zram_id >= 0) {
		char n[16];

		snprintf(n, sizeof(n), "%d", st->zram_id);
		if ((r = zram_sysfs(st->zram_id, "reset", "1", m)) < 0)
			return r;
		r = write_str(ZRAM_CONTROL "/hot_remove", n);
		if (r < 0 && r != -ENODEV) {
			diag_error(m, NULL, 0, "zram%d: hot_remove: %s", st->zram_id, strerror(-r));
			return r;
		}
	}
	return 0;
}

int area_teardown(const char *state_dir, const char *name, bool do_sync, struct diag_list *msgs)
{
	struct area_dirs d;
	struct state_area st;
	int fd, r;

	if ((r = area_dirs_init(&d, state_dir, name)) < 0)
		return r;
	wait_for_copy(d.area);
	fd = area_record_open_locked(&d, &st);
	if (fd < 0) {
		/* a setup that died before writing its state: undo what exists */
		r = umount_one(name, d.lower, NULL, msgs);
		if (r == 0)
			r = umount_one(name, d.area, NULL, msgs);
		goto remove;
	}
	r = teardown_locked(&d, &st, do_sync, msgs);
	state_area_done(&st);
	close(fd);
remove:
	if (r == 0) {
		unlink(d.state);
		rmdir(d.area);
		rmdir(d.lower);
		rmdir(d.top);
	}
	area_dirs_done(&d);
	return r;
}

/* ------------------------------------------------------------ status */

static int area_record_load(const char *state_dir, const char *name, struct state_area *st)
{
	struct area_dirs d;
	int fd, r;

	if ((r = area_dirs_init(&d, state_dir, name)) < 0)
		return r;
	fd = open(d.state, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	r = fd < 0 ? -errno : state_area_read_fd(fd, st);
	if (fd >= 0)
		close(fd);
	area_dirs_done(&d);
	return r;
}

static int area_record_cmp(const void *x, const void *y)
{
	const struct state_area *a = x, *b = y;

	if (a->started_usec != b->started_usec)
		return a->started_usec < b->started_usec ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* all readable state files under @state_dir/areas, in setup order */
static int area_records_load(const char *state_dir, struct state_area **ret, size_t *ret_n)
{
	_cleanup_free_ char *areas = NULL;
	struct state_area *v = NULL, *nv;
	struct dirent *de;
	size_t n = 0;
	DIR *dir;

	*ret = NULL;
	*ret_n = 0;
	if (asprintf(&areas, "%s/areas", state_dir) < 0)
		return -ENOMEM;
	dir = opendir(areas);
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.' || !(nv = realloc(v, (n + 1) * sizeof(*v))))
			continue;
		v = nv;
		if (area_record_load(state_dir, de->d_name, &v[n]) == 0)
			n++;
	}
	closedir(dir);
	if (n)
		qsort(v, n, sizeof(*v), area_record_cmp);
	*ret = v;
	*ret_n = n;
	return 0;
}

int area_list_names(const char *state_dir, char ***ret)
{
	_cleanup_free_ char *dir = NULL;
	struct dirent **v = NULL;
	char **names = NULL;
	int n, r = 0;

	if (asprintf(&dir, "%s/areas", state_dir) < 0)
		return -ENOMEM;
	/* every area directory, with a state file or not: a setup killed
	 * before writing it leaves mounts that stop must find too */
	n = scandir(dir, &v, NULL, alphasort);
	if (n < 0 && errno != ENOENT)
		return -errno;
	for (int i = 0; i < n; i++) {
		if (r == 0 && name_is_valid(v[i]->d_name))
			r = strv_extend(&names, v[i]->d_name);
		free(v[i]);
	}
	free(v);
	if (r == 0 && !names && !(names = calloc(1, sizeof(char *))))
		r = -ENOMEM;
	if (r < 0) {
		strv_free(names);
		return r;
	}
	*ret = names;
	return 0;
}

static void status_fill(const char *state_dir, struct state_area *st, struct area_status *o)
{
	struct area_dirs d;
	struct statvfs v;

	*o = (struct area_status){ .persist = st->persist, .seeded = st->seeded };
	o->name = st->name;
	o->path = st->path;
	o->device = st->device;
	o->fs = st->fs;
	o->backend = strdup(config_backend_name(st->backend));
	st->name = st->path = st->device = st->fs = NULL;
	o->size_bytes = st->size_bytes;
	o->inodes_total = st->nr_inodes;
	if (area_dirs_init(&d, state_dir, o->name) == 0 && is_mount_of(d.area, NULL) &&
	    statvfs(d.area, &v) == 0) {
		o->size_bytes = (uint64_t)v.f_blocks * v.f_frsize;
		o->used_bytes = (uint64_t)(v.f_blocks - v.f_bfree) * v.f_frsize;
		o->inodes_total = v.f_files;
		o->inodes_used = v.f_files - v.f_ffree;
	}
	area_dirs_done(&d);
}

int area_status_list(const char *state_dir, struct area_status **ret, size_t *ret_n)
{
	struct state_area *v;
	struct area_status *o;
	size_t n;
	int r = area_records_load(state_dir, &v, &n);

	if (r < 0)
		return r;
	o = calloc(n ? n : 1, sizeof(*o));
	for (size_t i = 0; o && i < n; i++)
		status_fill(state_dir, &v[i], &o[i]);
	for (size_t i = 0; i < n; i++)
		state_area_done(&v[i]);
	free(v);
	if (!o)
		return -ENOMEM;
	*ret = o;
	*ret_n = n;
	return 0;
}

void area_status_free(struct area_status *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].name);
		free(v[i].path);
		free(v[i].backend);
		free(v[i].device);
		free(v[i].fs);
	}
	free(v);
}

int area_private_mounts(const char *state_dir, const char *name, char **ret_area, char **ret_lower)
{
	struct area_dirs d;
	int r = area_dirs_init(&d, state_dir, name);

	if (r < 0)
		return r;
	*ret_area = d.area;
	*ret_lower = d.lower;
	d.area = d.lower = NULL;
	area_dirs_done(&d);
	return 0;
}
