/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Mount children on the real system, in a private temporary directory: a
 * tmpfs and a bind of a local directory run in storaged itself; a type that
 * may hang goes to a child of its own, whose error comes back; a child that
 * died is reported, not waited for.  Needs root (mount(2)).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "parse/fsfacts.h"
#include "mount/mount_child.h"

struct fixture {
	char top[64];
	char a[128], b[128], src[128];
	struct mount_children mounts;
	struct mount_reply reply;
};

static int setup(void **ctx)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->top, "/tmp/test_mount_child.XXXXXX");
	if (!mkdtemp(f->top))
		return -1;
	snprintf(f->a, sizeof(f->a), "%s/a", f->top);
	snprintf(f->b, sizeof(f->b), "%s/a/b", f->top);
	snprintf(f->src, sizeof(f->src), "%s/src", f->top);
	if (mkdir(f->a, 0755) < 0 || mkdir(f->src, 0755) < 0)
		return -1;
	*ctx = f;
	return 0;
}

static int teardown(void **ctx)
{
	struct fixture *f = *ctx;
	char cmd[128];

	mount_children_close(&f->mounts);
	umount2(f->b, MNT_DETACH);
	umount2(f->a, MNT_DETACH);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->top);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

static struct fstab_entry entry(char *source, char *target, char *fstype, bool bind)
{
	return (struct fstab_entry){ .source = source, .target = target, .fstype = fstype, .bind = bind };
}

static void test_fstype_is_local(void **unused)
{
	assert_true(fsfacts_is_local("ext4"));
	assert_true(fsfacts_is_local("tmpfs"));
	assert_true(fsfacts_is_local("btrfs"));
	assert_false(fsfacts_is_local("nfs4"));
	assert_false(fsfacts_is_local("cifs"));
	assert_false(fsfacts_is_local("fuse.sshfs"));
	assert_false(fsfacts_is_local("autofs"));
	assert_false(fsfacts_is_local("overlay"));
	assert_false(fsfacts_is_local("made-up"));
	assert_false(fsfacts_is_local(NULL));
}

static void assert_mount_id(const char *path, int id)
{
	struct statx stx;

	assert_int_equal(statx(AT_FDCWD, path, 0, 0x1000U /* STATX_MNT_ID */, &stx), 0);
	assert_int_equal((int)stx.stx_mnt_id, id);
}

/* A tmpfs, then a bind below it (X-mount.mkdir), both run here. */
static void test_tmpfs_and_bind_run_here(void **ctx)
{
	struct fixture *f = *ctx;
	struct fstab_entry t = entry("test", f->a, "tmpfs", false), b = entry(f->src, f->b, "none", true);
	int fd = -2;
	pid_t pid = -2;

	assert_int_equal(mount_child_start(&f->mounts, &t, "size=1M,mode=0755", &fd, &pid, &f->reply), 1);
	assert_int_equal(f->reply.error, 0);
	assert_string_equal(f->reply.mountpoint, f->a);
	assert_true(f->reply.mount.id > 0);
	assert_mount_id(f->a, f->reply.mount.id);
	assert_int_equal(f->mounts.n, 0); /* no child was needed */
	assert_int_equal(mount_child_start(&f->mounts, &b, "bind,X-mount.mkdir", &fd, &pid, &f->reply), 1);
	assert_int_equal(f->reply.error, 0);
	assert_mount_id(f->b, f->reply.mount.id);
	assert_int_equal(f->mounts.n, 0);
}

/* A failure run here comes back with libmount's message. */
static void test_error_here(void **ctx)
{
	struct fixture *f = *ctx;
	char missing[160];
	struct fstab_entry b = entry(missing, f->b, "none", true);
	int fd;
	pid_t pid;

	snprintf(missing, sizeof(missing), "%s/src/missing", f->top);
	assert_int_equal(mount_child_start(&f->mounts, &b, "bind", &fd, &pid, &f->reply), 1);
	assert_true(f->reply.error < 0);
	assert_true(f->reply.message[0] != '\0');
}

static void wait_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	assert_int_equal(poll(&p, 1, 10000), 1);
}

/* An ext4 entry (it reads a device, which may hang) of a missing image,
 * run by a child: its socket in @fd, its pid in @pid. */
static void start_ext4(struct fixture *f, char *image, size_t len, int *fd, pid_t *pid)
{
	struct fstab_entry e = entry(image, f->a, "ext4", false);

	snprintf(image, len, "%s/src/no-such-device", f->top);
	assert_int_equal(mount_child_start(&f->mounts, &e, NULL, fd, pid, &f->reply), 0);
}

static void test_other_type_goes_to_child(void **ctx)
{
	struct fixture *f = *ctx;
	char image[160];
	int fd = -1;
	pid_t pid = 0;

	start_ext4(f, image, sizeof(image), &fd, &pid);
	assert_true(fd >= 0);
	assert_true(pid > 0);
	assert_int_equal(f->mounts.n, 1);
	wait_readable(fd);
	assert_int_equal(mount_child_finish(&f->mounts, fd, &f->reply), 0);
	assert_true(f->reply.error < 0);
	assert_non_null(strstr(f->reply.message, "no-such-device"));
	/* a child per mount: reaped after its reply */
	assert_int_equal(f->mounts.n, 0);
	assert_int_equal(kill(pid, 0), -1);
	assert_int_equal(errno, ESRCH);
}

/* A child killed mid-way is reported. */
static void test_dead_child(void **ctx)
{
	struct fixture *f = *ctx;
	char image[160];
	int fd;
	pid_t pid;

	start_ext4(f, image, sizeof(image), &fd, &pid);
	assert_int_equal(kill(pid, SIGKILL), 0);
	wait_readable(fd);
	/* killed before or after it replied: either is fine, neither hangs */
	if (mount_child_finish(&f->mounts, fd, &f->reply) == -EIO)
		assert_int_equal(f->mounts.n, 0);
	mount_child_abandon(&f->mounts, fd); /* no-op when already removed */
	assert_int_equal(f->mounts.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fstype_is_local),
		cmocka_unit_test_setup_teardown(test_tmpfs_and_bind_run_here, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_here, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_type_goes_to_child, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dead_child, setup, teardown),
	};

	if (geteuid() != 0) {
		fprintf(stderr, "test_mount_child: needs root (mount(2))\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
