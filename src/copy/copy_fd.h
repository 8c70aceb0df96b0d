/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One entry of the tree copy, by descriptor (copy.c walks).  The source's
 * owner may change it during the copy (a directory may become a link
 * between two looks), so each entry is looked up exactly once, one name
 * below a directory descriptor, O_PATH | O_NOFOLLOW; its type, owner,
 * mode, size, times, data and xattrs all come from that inode.  No path
 * with a '/' is looked up in the source.
 */
#ifndef STORAGED_COPY_FD_H
#define STORAGED_COPY_FD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Every call that takes a name (one, never with '/'), so that a test can
 * record or disturb each (tests/unit/test_copy.c).  xattrs of nodes and
 * fifos, which cannot be opened safely, go through /proc/self/fd/N of an
 * O_PATH descriptor. */
struct copy_sys {
	int (*openat)(int dirfd, const char *name, int flags, mode_t mode);
	/* reopens the inode of the O_PATH descriptor @fd with @flags */
	int (*reopen)(int fd, int flags);
	int (*mkdirat)(int dirfd, const char *name, mode_t mode);
	int (*symlinkat)(const char *target, int dirfd, const char *name);
	ssize_t (*readlinkat)(int dirfd, const char *name, char *buf, size_t len);
	int (*mknodat)(int dirfd, const char *name, mode_t mode, dev_t dev);
	int (*linkat)(int olddirfd, const char *oldname, int newdirfd, const char *newname, int flags);
	int (*fchownat)(int dirfd, const char *name, uid_t uid, gid_t gid, int flags);
	int (*fchmodat)(int dirfd, const char *name, mode_t mode, int flags);
	int (*utimensat)(int dirfd, const char *name, const struct timespec ts[2], int flags);
	int (*unlinkat)(int dirfd, const char *name, int flags);
};

/* the real calls (reopen through /proc/self/fd) */
extern const struct copy_sys copy_sys_libc;

/* xattrs (ACLs among them): @len bytes of "name\0", u32 length, value... */
struct copy_xattrs {
	char *buf;
	size_t len;
};

/* What an entry's copy could not keep because the destination refused it
 * (an xattr: EOPNOTSUPP, E2BIG, ENOSPC, EPERM/EACCES for trusted.* or
 * security.*, EINVAL, ERANGE; file flags), for a warning.  Zeroed by the
 * caller. */
struct copy_lost {
	unsigned n; /* attributes lost */
	int err; /* the first one's, negative */
	char what[300]; /* the first one: "extended attribute 'NAME'", "file flags" */
};

/* notes @what (then @name quoted, unless NULL) lost with @err */
void copy_lost_add(struct copy_lost *lost, int err, const char *what, const char *name);

/* "extended attribute 'user.x' not kept: No space left on device (and N
 * more)" into @buf, for a message */
const char *copy_lost_text(const struct copy_lost *lost, char *buf, size_t len);

/* what a directory's copy gets once everything below it is written */
struct copy_dirmeta {
	char *rel; /* path below the destination root; "" for the root */
	struct stat st;
	unsigned fflags; /* FS_IOC_GETFLAGS bits to set; 0: none */
	struct copy_xattrs xa;
};

/* copy_xattrs_read: @fd's xattrs into @ret (buf NULL: none; free buf);
 * @viaproc: @fd is O_PATH, read through /proc/self/fd (nodes, fifos).
 * Returns: 0 (no xattr support: none); negative errno. */
int copy_xattrs_read(int fd, bool viaproc, struct copy_xattrs *ret);

/* a walk over the xattrs of a struct copy_xattrs, in its order */
struct copy_xattr_iter {
	const char *p, *end;
};

static inline struct copy_xattr_iter copy_xattr_iter_of(const struct copy_xattrs *xa)
{
	return (struct copy_xattr_iter){ xa ? xa->buf : NULL, xa && xa->buf ? xa->buf + xa->len : NULL };
}

/* the next xattr of @it, pointing into its struct copy_xattrs (value not
 * NUL-ended); false past the last */
bool copy_xattrs_next(struct copy_xattr_iter *it, const char **ret_name, const char **ret_val,
		      uint32_t *ret_vlen);

/* the value of xattr @name in @xa (not NUL-ended), or NULL */
const char *copy_xattrs_find(const struct copy_xattrs *xa, const char *name, uint32_t *ret_vlen);

/* storaged's own xattrs: only root may set trusted.* (xattr(7)); never
 * copied (copy_xattrs_read() leaves them out) */
#define COPY_OWN_XATTRS "trusted.storaged."

bool copy_xattr_is_own(const char *name);

/* removes the xattrs of @fd (a copy kept by the sync back) that @xa lacks,
 * storaged's own aside, so that copy_xattrs_write() leaves exactly @xa.
 * Returns: 0; negative errno of fremovexattr(). */
int copy_xattrs_prune(int fd, const struct copy_xattrs *xa);

/* @lost: NULL, or where an xattr the destination refuses is noted and
 * skipped.  Returns: 0; negative errno of fsetxattr() (a namespace the
 * destination lacks, -EOPNOTSUPP, is skipped). */
int copy_xattrs_write(int fd, bool viaproc, const struct copy_xattrs *xa, struct copy_lost *lost);

/* copies @size bytes of @in (from offset 0) into the empty @out, adding to
 * @bytes (NULL: none); @sparse: look for holes (SEEK_DATA/HOLE), which stay holes.
 * Returns: 0; negative errno (-ENOSPC, -EIO). */
int copy_data(int in, int out, off_t size, char *buf, size_t bufsize, atomic_uint_fast64_t *bytes,
	      bool sparse);

/* the FS_IOC_GETFLAGS bits (linux/fs.h) a copy keeps: append-only,
 * immutable, nodump, noatime, sync, dirsync, nocow, project inherit; 0 */
unsigned copy_fflags_get(int fd);

/*
 * copy_meta_fd: sets on the copy @fd the source's owner, then xattrs
 * (chown drops security.capability), then mode with setuid/setgid (chown
 * drops them), times, and file flags last (immutable forbids the rest).
 * @lost: as for copy_xattrs_write(), for flags too.
 * Returns: 0; negative errno.
 */
int copy_meta_fd(int fd, const struct stat *st, const struct copy_xattrs *xa, unsigned fflags,
		 struct copy_lost *lost);

/* adds @want to @fd's flags; a filesystem lacking some (tmpfs) keeps what
 * it can, as libarchive did.  Returns: 0; negative errno of
 * FS_IOC_SETFLAGS other than "not supported". */
int copy_fflags_add(int fd, unsigned want, struct copy_lost *lost);

/*
 * copy_open_data: opens the O_PATH @fd's inode for reading as any opener
 * would, blocking, so that a lease is broken the kernel's way (the holder
 * has /proc/sys/fs/lease-break-time seconds: fcntl(2), "Leases"; with
 * O_NONBLOCK, EWOULDBLOCK at once); EINTR, EAGAIN, EBUSY are retried 4
 * times 100 ms apart.
 * Returns: a new descriptor; negative errno.
 */
int copy_open_data(const struct copy_sys *sys, int fd);

/* a non-directory being copied (not a socket), from the O_PATH lookup @fd
 * and its fstat() @st; the rest zeroed but in = out = -1 */
struct copy_node {
	int fd; /* O_PATH | O_NOFOLLOW: the one lookup of the name */
	struct stat st;
	int in, out; /* regular files: @fd reopened to read, the copy */
	char *target; /* symbolic links */
	struct copy_xattrs xa;
	unsigned fflags; /* regular files: set by copy_node_finish() */
};

/* reads what the copy needs from @n->fd: data opened, target, xattrs,
 * file flags.  Returns: 0; negative errno. */
int copy_node_read(const struct copy_sys *sys, struct copy_node *n);

/* one try at creating @n's copy as the new name @name in @dirfd, by type
 * (a file: @n->out).  Returns: 0; negative errno (-EEXIST). */
int copy_node_create(const struct copy_sys *sys, struct copy_node *n, int dirfd, const char *name);

/*
 * copy_node_finish: the created copy's data and holes (adding to @bytes,
 * NULL: none), then owner, xattrs, mode, times and @n->fflags (zero them
 * to set them later: an immutable or append-only file could not be
 * renamed or linked into place).  @lost: as for copy_meta_fd().
 * Returns: 0; negative errno.
 */
int copy_node_finish(const struct copy_sys *sys, const struct copy_node *n, int dirfd, const char *name,
		     char *buf, size_t bufsize, atomic_uint_fast64_t *bytes, struct copy_lost *lost);

/* closes and frees what @n holds but @n->fd */
void copy_node_done(struct copy_node *n);

/* opens the directory @rel ("" or NULL: @rootfd) the copy made, one
 * component at a time, O_NOFOLLOW | O_DIRECTORY.  Returns: a new
 * descriptor; negative errno (-ELOOP, -ENOTDIR, -EINVAL for ".."). */
int copy_open_beneath(const struct copy_sys *sys, int rootfd, const char *rel);

#endif
