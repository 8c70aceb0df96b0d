/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The mount primitives (mountfd.c) and the walk-then-mount helper
 * (mountfd_walk.c) against a recording fake of the system calls: each
 * mount call must get a descriptor, and no path string but "" or
 * "/proc/self/fd/N" of a descriptor the caller holds (C20).  Needs no root:
 * nothing is mounted.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "mount/mount_helper.h"
#include "mount/mountfd.h"
#include "mount/mountfd_walk.h"
#include "mount/umount.h"

struct fake {
	char log[4096]; /* one line a call */
	int fsopen_ret; /* 0: a descriptor; else returned */
	uint64_t stat_id; /* what statx says */
	bool stat_root;
	bool no_unique; /* statx as Linux < 6.8: no STATX_MNT_ID_UNIQUE */
	unsigned stat_dev_minor; /* and of the root: device, inode, birth */
	uint64_t stat_ino, stat_btime_ns;
	int target_seen; /* the to_fd of the last move_mount, dup'ed */
	int setattr_ret; /* what mount_setattr returns */
	int mount_ret; /* what mount(2) returns */
};

static void rec(struct fake *f, const char *fmt, ...)
{
	va_list ap;
	size_t n = strlen(f->log);

	va_start(ap, fmt);
	vsnprintf(f->log + n, sizeof(f->log) - n, fmt, ap);
	va_end(ap);
	strncat(f->log, "\n", sizeof(f->log) - strlen(f->log) - 1);
}

static void assert_fd(int fd)
{
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) >= 0);
}

/* A path argument: "" or /proc/self/fd/N[/NAME] of an open descriptor. */
static void assert_no_path(const char *p)
{
	int fd, n = 0;

	if (!p || !*p)
		return;
	assert_int_equal(sscanf(p, "/proc/self/fd/%d%n", &fd, &n), 1);
	assert_fd(fd);
	assert_true(p[n] == '\0' || (p[n] == '/' && !strchr(p + n + 1, '/')));
}

static int new_fd(void)
{
	return open("/", O_PATH | O_CLOEXEC);
}

static int f_fsopen(void *u, const char *fstype, unsigned int flags)
{
	struct fake *f = u;

	rec(f, "fsopen %s", fstype);
	return f->fsopen_ret ? f->fsopen_ret : new_fd();
}

static int f_fsconfig(void *u, int fd, unsigned int cmd, const char *key, const char *value, int aux)
{
	assert_fd(fd);
	rec(u, "fsconfig %u %s=%s", cmd, key ? key : "-", value ? value : "-");
	return 0;
}

static int f_fsmount(void *u, int fd, unsigned int flags, unsigned int attr)
{
	assert_fd(fd);
	rec(u, "fsmount attr=%#x", attr);
	return new_fd();
}

static int f_move_mount(void *u, int from_fd, const char *from, int to_fd, const char *to, unsigned int flags)
{
	struct fake *f = u;

	assert_fd(from_fd);
	assert_fd(to_fd);
	assert_string_equal(from, "");
	assert_string_equal(to, "");
	assert_int_equal(flags, MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
	if (f->target_seen >= 0)
		close(f->target_seen);
	f->target_seen = dup(to_fd);
	rec(u, "move_mount");
	return 0;
}

static int f_open_tree(void *u, int dfd, const char *path, unsigned int flags)
{
	struct fake *f = u;

	assert_fd(dfd);
	assert_string_equal(path, "");
	assert_true(flags & AT_EMPTY_PATH);
	assert_true(flags & OPEN_TREE_CLONE);
	rec(u, "open_tree%s", flags & AT_RECURSIVE ? " rec" : "");
	return f->fsopen_ret ? f->fsopen_ret : new_fd();
}

static int f_mount_setattr(void *u, int dfd, const char *path, unsigned int flags,
			   struct mount_attr *a, size_t size)
{
	assert_fd(dfd);
	assert_string_equal(path, "");
	assert_true(flags & AT_EMPTY_PATH);
	rec(u, "mount_setattr set=%#llx prop=%#llx%s", (unsigned long long)a->attr_set,
	    (unsigned long long)a->propagation, a->attr_clr == MOUNT_ATTR__ATIME ? " clr=atime" : "");
	return ((struct fake *)u)->setattr_ret;
}

static int f_mount(void *u, const char *source, const char *target, const char *type,
		   unsigned long flags, const void *data)
{
	assert_no_path(target);
	rec(u, "mount %s %s %#lx %s",
	    source ? (strncmp(source, "/proc/self/fd/", 14) ? source : "FD") : "-",
	    type ? type : "-", flags, data ? (const char *)data : "-");
	if (source && source[0] == '/')
		assert_no_path(source);
	return ((struct fake *)u)->mount_ret;
}

static int f_umount2(void *u, const char *target, int flags)
{
	assert_no_path(target);
	rec(u, "umount2 %s %#x", strrchr(target, '/') + 1, flags);
	return 0;
}

static int f_statx(void *u, int dfd, const char *path, int flags, unsigned int mask, struct statx *stx)
{
	struct fake *f = u;

	assert_fd(dfd);
	assert_null(strchr(path, '/'));
	memset(stx, 0, sizeof(*stx));
	stx->stx_mask = f->no_unique ? mask & ~STATX_MNT_ID_UNIQUE : mask;
	stx->stx_mnt_id = f->stat_id;
	stx->stx_dev_minor = f->stat_dev_minor;
	stx->stx_ino = f->stat_ino;
	stx->stx_btime.tv_sec = (int64_t)(f->stat_btime_ns / 1000000000u);
	stx->stx_btime.tv_nsec = (uint32_t)(f->stat_btime_ns % 1000000000u);
	stx->stx_attributes_mask = STATX_ATTR_MOUNT_ROOT;
	stx->stx_attributes = f->stat_root ? STATX_ATTR_MOUNT_ROOT : 0;
	return 0;
}

static struct fake fk;
static const struct mountfd_ops ops = {
	.fsopen = f_fsopen,
	.fsconfig = f_fsconfig,
	.fsmount = f_fsmount,
	.move_mount = f_move_mount,
	.open_tree = f_open_tree,
	.mount_setattr = f_mount_setattr,
	.mount = f_mount,
	.umount2 = f_umount2,
	.statx = f_statx,
	.userdata = &fk,
};

static int reset(void **unused)
{
	(void)unused;
	if (fk.target_seen > 0)
		close(fk.target_seen);
	fk = (struct fake){ .target_seen = -1 };
	return 0;
}

static void test_fs_options_one_by_one(void **unused)
{
	struct mountfd_opts o;
	int t = new_fd(), m = -1;

	assert_int_equal(mountfd_parse_options("size=1M,mode=0755,nosuid,nodev,noauto,x-storaged,X-mount.mkdir,huge",
					       &o),
			 0);
	assert_int_equal(mountfd_fs(&ops, "tmpfs", "storaged-x", &o, MOUNT_ATTR_NOEXEC, t, &m, NULL, 0), 0);
	assert_fd(m);
	assert_string_equal(fk.log, "fsopen tmpfs\n"
				    "fsconfig 1 source=storaged-x\n"
				    "fsconfig 1 size=1M\n"
				    "fsconfig 1 mode=0755\n"
				    "fsconfig 0 huge=-\n"
				    "fsconfig 6 -=-\n"
				    "fsmount attr=0xe\n"
				    "move_mount\n");
	mountfd_opts_done(&o);
	close(m);
	close(t);
}

/* `bg` (mount.nfs's) never reaches the kernel: alone, and among others */
static void test_bg_dropped(void **unused)
{
	struct mountfd_opts o;

	assert_int_equal(mountfd_parse_options("bg,nosuid", &o), 0);
	assert_null(o.fs);
	assert_int_equal(o.attr, MOUNT_ATTR_NOSUID);
	mountfd_opts_done(&o);
	assert_int_equal(mountfd_parse_options("size=1M,bg,mode=0755", &o), 0);
	assert_string_equal(o.fs, "size=1M,mode=0755");
	mountfd_opts_done(&o);
	assert_int_equal(mountfd_parse_options("bind,bg", &o), 0);
	assert_true(o.bind);
	assert_null(o.fs);
	mountfd_opts_done(&o);
}

static void test_ro_is_sb_and_mount(void **unused)
{
	struct mountfd_opts o;
	int t = new_fd();

	assert_int_equal(mountfd_parse_options("ro,rprivate", &o), 0);
	assert_int_equal(mountfd_fs(&ops, "ramfs", "r", &o, 0, t, NULL, NULL, 0), 0);
	assert_non_null(strstr(fk.log, "fsconfig 0 ro=-\n"));
	assert_non_null(strstr(fk.log, "fsmount attr=0x1\n"));
	assert_non_null(strstr(fk.log, "move_mount\nmount_setattr set=0 prop=0x40000\n"));
	mountfd_opts_done(&o);
	assert_int_equal(mountfd_parse_options("remount", &o), -EINVAL);
	close(t);
}

static void test_bind(void **unused)
{
	struct mountfd_opts o;
	int s = new_fd(), t = new_fd();

	assert_int_equal(mountfd_parse_options("rbind,ro,nosuid", &o), 0);
	assert_true(o.rbind);
	assert_int_equal(mountfd_bind(&ops, s, t, o.rbind, o.attr, MS_PRIVATE, NULL), 0);
	assert_string_equal(fk.log, "open_tree rec\n"
				    "mount_setattr set=0x3 prop=0\n"
				    "move_mount\n"
				    "mount_setattr set=0 prop=0x40000\n");
	mountfd_opts_done(&o);
	close(s);
	close(t);
}

/* C12: a bind keeps its source mount's flags; those asked for are added. */
static void test_bind_adds_to_source_flags(void **unused)
{
	struct mountfd_opts o;
	int s = new_fd(), t = new_fd();

	/* an atime mode is cleared as a whole to be set */
	assert_int_equal(mountfd_parse_options("bind,noatime", &o), 0);
	assert_int_equal(mountfd_bind(&ops, s, t, false, o.attr, 0, NULL), 0);
	assert_string_equal(fk.log, "open_tree\nmount_setattr set=0x10 prop=0 clr=atime\nmove_mount\n");
	mountfd_opts_done(&o);
	close(s);
	close(t);
}

static void test_umount_checks_id(void **unused)
{
	int p = new_fd();
	struct mount_identity id41 = { .id = 41 }, id42 = { .id = 42 };

	fk.stat_id = 41;
	fk.stat_root = true;
	assert_int_equal(umount_at(&ops, p, "area", &id42, 0), -ESTALE);
	assert_string_equal(fk.log, "");
	fk.stat_root = false;
	assert_int_equal(umount_at(&ops, p, "area", &id41, 0), -ESTALE);
	fk.stat_root = true;
	assert_int_equal(umount_at(&ops, p, "a/b", &id41, 0), -EINVAL);
	assert_int_equal(umount_at(&ops, p, "..", &id41, 0), -EINVAL);
	assert_int_equal(umount_at(&ops, p, "area", &id41, MNT_DETACH), 0);
	assert_string_equal(fk.log, "umount2 area 0xa\n");
	close(p);
}

/* Without a never-reused ID (Linux < 6.8, here the fake's statx(2) without
 * STATX_MNT_ID_UNIQUE), a mount given the recorded ID after storaged's
 * was unmounted is told by its root: another tmpfs has the same anonymous
 * device and root inode number, and another birth time. */
static void test_umount_reused_id_without_unique(void **unused)
{
	struct mount_identity rec = { .id = 41, .root_dev = makedev(0, 50), .root_ino = 1,
				      .root_btime_ns = 1000000001 };
	int p = new_fd();

	fk.stat_id = 41;
	fk.stat_root = true;
	fk.no_unique = true;
	fk.stat_dev_minor = 50;
	fk.stat_ino = 1;
	fk.stat_btime_ns = 2000000002;
	assert_int_equal(umount_at(&ops, p, "t", &rec, 0), -ESTALE);
	assert_string_equal(fk.log, "");
	fk.stat_btime_ns = 1000000001;
	assert_int_equal(umount_at(&ops, p, "t", &rec, 0), 0);
	assert_string_equal(fk.log, "umount2 t 0x8\n");
	/* a record of an older storaged, with the ID alone: trusted as before */
	assert_int_equal(umount_at(&ops, p, "t", &(struct mount_identity){ .id = 41 }, 0), 0);
	close(p);
}

/* Where both never-reused IDs are known, they decide; the root facts of a
 * record do not matter then. */
static void test_identity_unique_decides(void **unused)
{
	struct mount_identity rec = { .id = 7, .unique_id = 100, .root_ino = 5 };
	struct mount_identity now = { .id = 7, .unique_id = 101, .root_ino = 5 };

	assert_false(mount_identity_is(&now, &rec));
	now.unique_id = 100;
	now.root_ino = 6;
	assert_true(mount_identity_is(&now, &rec));
	now.id = 8;
	assert_false(mount_identity_is(&now, &rec));
}

/* The walk-then-mount helper: the descriptor that reaches move_mount is
 * the directory the walk found; X-mount.mkdir made the missing part; an
 * untrusted link refuses before any mount call. */
static void test_walk_then_mount(void **unused)
{
	char top[] = "/tmp/test_mountfd.XXXXXX", target[128], src[128], link[128], cmd[160];
	struct mount_reply out;
	struct stat a, b;
	struct mountfd_request rq = { .source = "tmpfs",
				      .target = target,
				      .fstype = "tmpfs",
				      .options = "size=1M,X-mount.mkdir=0700",
				      .no_helper = true };

	assert_non_null(mkdtemp(top));
	snprintf(target, sizeof(target), "%s/a/b", top);
	fk.stat_id = 77;
	fk.stat_root = true; /* fsmount(2)'s descriptor is the new mount's root */
	assert_int_equal(mountfd_walk_mount(&ops, NULL, &rq, &out), 0);
	assert_int_equal(stat(target, &a), 0);
	assert_int_equal(a.st_mode & 07777, 0700);
	assert_int_equal(fstat(fk.target_seen, &b), 0);
	assert_true(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
	assert_string_equal(out.mountpoint, target);
	assert_int_equal(out.mount.id, 77);
	/* the new API only */
	assert_null(strstr(fk.log, "\nmount "));
	assert_true(strncmp(fk.log, "fsopen tmpfs\n", 13) == 0);

	/* a bind: source and target both by descriptor */
	snprintf(src, sizeof(src), "%s/src", top);
	assert_int_equal(mkdir(src, 0755), 0);
	rq = (struct mountfd_request){
		.bind = true, .source = src, .target = target, .fstype = "none", .options = "bind"
	};
	fk.log[0] = '\0';
	assert_int_equal(mountfd_walk_mount(&ops, NULL, &rq, &out), 0);
	assert_string_equal(fk.log, "open_tree\nmove_mount\n");

	/* a link planted by another user: refused, nothing called */
	snprintf(link, sizeof(link), "%s/shared", top);
	assert_int_equal(chmod(top, 01777), 0);
	assert_int_equal(symlink(src, link), 0);
	assert_int_equal(lchown(link, 65534, 65534), 0);
	rq = (struct mountfd_request){
		.source = "tmpfs", .target = link, .fstype = "tmpfs", .options = "", .no_helper = true
	};
	fk.log[0] = '\0';
	assert_int_equal(mountfd_walk_mount(&ops, NULL, &rq, &out), -EPERM);
	assert_non_null(strstr(out.message, "refusing to mount: mount point"));
	assert_string_equal(fk.log, "");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	assert_int_equal(system(cmd), 0);
}

/* A tmpfs in a directory only root can rename in: one mount(2) onto the
 * walked descriptor, the IDs by the name in the kept parent; a failure
 * tries the new API again for the kernel's reason. */
static void test_walk_fast_tmpfs(void **unused)
{
	char top[] = "/tmp/test_mountfd.XXXXXX", target[128], cmd[160];
	struct view view = { 0 };
	struct mount_reply out;
	struct mountfd_request rq = { .source = "tmpfs",
				      .target = target,
				      .fstype = "tmpfs",
				      .options = "size=1M,nosuid,X-mount.mkdir",
				      .no_helper = true,
				      .view = &view };

	if (geteuid() != 0)
		skip(); /* a directory of the user's is not trusted */
	assert_non_null(mkdtemp(top));
	snprintf(target, sizeof(target), "%s/b", top);
	fk.stat_id = 77;
	fk.stat_root = true;
	assert_int_equal(mountfd_walk_mount(&ops, NULL, &rq, &out), 0);
	assert_string_equal(fk.log, "mount tmpfs tmpfs 0x2 size=1M\n");
	assert_int_equal(out.mount.id, 77);
	assert_string_equal(out.mountpoint, target);
	/* not a mount's root by that name: the IDs are not guessed */
	fk.log[0] = '\0';
	fk.stat_root = false;
	assert_int_equal(mountfd_walk_mount(&ops, NULL, &rq, &out), 0);
	assert_int_equal(out.mount.id, 0);
	/* mount(2) refused: the new API says why */
	fk.log[0] = '\0';
	fk.mount_ret = -EINVAL;
	assert_int_equal(mountfd_walk_mount(&ops, NULL, &rq, &out), 0);
	assert_true(strncmp(fk.log, "mount tmpfs tmpfs 0x2 size=1M\nfsopen tmpfs\n", 43) == 0);
	/* a propagation flag: the new API at once */
	fk.log[0] = '\0';
	rq.options = "size=1M,private";
	assert_int_equal(mountfd_walk_mount(&ops, NULL, &rq, &out), 0);
	assert_true(strncmp(fk.log, "fsopen tmpfs\n", 13) == 0);
	safe_close(fk.target_seen); /* the fake's copy of the last target */
	view_done(&view);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	assert_int_equal(system(cmd), 0);
}

/* A pass's entries mostly share their options: each mount is given its
 * own copy of the split. */
static void test_options_each_own(void **unused)
{
	struct mountfd_opts a, b, c;

	assert_int_equal(mountfd_parse_options("size=1M,nosuid,noauto", &a), 0);
	assert_int_equal(mountfd_parse_options("size=1M,nosuid,noauto", &b), 0);
	assert_string_equal(a.fs, "size=1M");
	assert_true(a.fs != b.fs); /* each its own */
	assert_int_equal(a.attr, MOUNT_ATTR_NOSUID);
	mountfd_opts_done(&a);
	assert_string_equal(b.fs, "size=1M");
	assert_int_equal(mountfd_parse_options("ro", &c), 0);
	assert_null(c.fs);
	assert_int_equal(c.attr, MOUNT_ATTR_RDONLY);
	assert_int_equal(mountfd_parse_options("remount", &a), -EINVAL);
	assert_int_equal(mountfd_parse_options("remount", &a), -EINVAL);
	mountfd_opts_done(&b);
	mountfd_opts_done(&c);
}

/* A helper gets the options mount(8) would hand on, but none of
 * libmount's X-mount.*, which libmount applies by the mount point's name. */
static void test_helper_options(void **state)
{
	char *o = NULL;

	assert_int_equal(mount_helper_options("rw,X-mount.mkdir=0755,soft,x-mount.owner=1000,X-mount.mode=0700,x-c23.tag=a", &o), 0);
	assert_string_equal(o, "rw,soft,x-c23.tag=a");
	free(o);
	assert_int_equal(mount_helper_options("X-mount.mkdir", &o), 0);
	assert_null(o);
}

/* libmount looks for no helper of these (mnt_context_prepare_helper()). */
static void test_helper_not_looked_for(void **state)
{
	char buf[256];

	assert_int_equal(mount_helper_find(NULL, "", buf, sizeof(buf)), -ENOENT);
	assert_int_equal(mount_helper_find(NULL, NULL, buf, sizeof(buf)), -ENOENT);
	assert_int_equal(mount_helper_find(NULL, "none", buf, sizeof(buf)), -ENOENT);
	assert_int_equal(mount_helper_find(NULL, "nfs,cifs", buf, sizeof(buf)), -ENOENT);
	assert_int_equal(mount_helper_find(NULL, "x/../../bin/sh", buf, sizeof(buf)), -ENOENT);
	assert_int_equal(mount_helper_find(NULL, "storaged-no-such-type", buf, sizeof(buf)), -ENOENT);
	assert_false(mount_helper_exists(NULL, "storaged-no-such-type,none"));
}

static void make_file(const char *dir, const char *name, mode_t mode)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
	assert_true(fd >= 0);
	close(fd);
}

static void remove_file(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(unlink(path), 0);
}

/* The directories in order, "fuse.sshfs" falling back to mount.fuse, a
 * helper that is not executable not run, any type of a list. */
static void test_helper_found(void **state)
{
	char a[] = "/tmp/test-helper-a-XXXXXX", b[] = "/tmp/test-helper-b-XXXXXX";
	char dirs[128], buf[256], want[256];

	assert_non_null(mkdtemp(a));
	assert_non_null(mkdtemp(b));
	make_file(b, "mount.fuse", 0755);
	make_file(b, "mount.nfs", 0755);
	make_file(a, "mount.nfs", 0644);
	make_file(a, "mount.cifs", 0755);
	snprintf(dirs, sizeof(dirs), "%s::%s", a, b);

	assert_int_equal(mount_helper_find(dirs, "fuse.sshfs", buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "%s/mount.fuse", b);
	assert_string_equal(buf, want);
	assert_int_equal(mount_helper_find(dirs, "nfs", buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "%s/mount.nfs", b);
	assert_string_equal(buf, want);
	assert_int_equal(mount_helper_find(dirs, "cifs", buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "%s/mount.cifs", a);
	assert_string_equal(buf, want);
	assert_int_equal(mount_helper_find(dirs, "ext4", buf, sizeof(buf)), -ENOENT);
	assert_true(mount_helper_exists(dirs, "ext4,nfs"));
	assert_false(mount_helper_exists(dirs, "ext4,xfs"));
	assert_false(mount_helper_exists(dirs, ""));

	remove_file(a, "mount.nfs");
	remove_file(a, "mount.cifs");
	remove_file(b, "mount.nfs");
	remove_file(b, "mount.fuse");
	assert_int_equal(rmdir(a), 0);
	assert_int_equal(rmdir(b), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_fs_options_one_by_one, reset),
		cmocka_unit_test_setup(test_ro_is_sb_and_mount, reset),
		cmocka_unit_test_setup(test_bg_dropped, reset),
		cmocka_unit_test(test_helper_options),
		cmocka_unit_test(test_helper_not_looked_for),
		cmocka_unit_test(test_helper_found),
		cmocka_unit_test_setup(test_bind, reset),
		cmocka_unit_test_setup(test_umount_checks_id, reset),
		cmocka_unit_test_setup(test_umount_reused_id_without_unique, reset),
		cmocka_unit_test(test_identity_unique_decides),
		cmocka_unit_test_setup(test_bind_adds_to_source_flags, reset),
		cmocka_unit_test_setup(test_walk_then_mount, reset),
		cmocka_unit_test_setup(test_walk_fast_tmpfs, reset),
		cmocka_unit_test(test_options_each_own),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
