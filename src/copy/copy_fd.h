/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The descriptor-level pieces of the tree copy (copy.c walks, these copy
 * one entry).  Internal to storaged-copy and its unit tests.
 *
 * The source is a tree its owner may change while it is copied: a
 * directory may become a symbolic link between two looks at it.  So every
 * entry is looked up exactly once, as one name below a directory
 * descriptor, without following a symbolic link (O_PATH | O_NOFOLLOW);
 * its type, owner, mode, size and times come from fstat() of that
 * descriptor, its data and xattrs from that same inode.  No path with a
 * '/' is ever looked up in the source.  The destination is created below
 * the destination root's descriptor the same way, by storaged alone.
 */
#ifndef STORAGED_COPY_FD_H
#define STORAGED_COPY_FD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * Every call of the copy that takes a name: a directory descriptor and one
 * name (never a path with '/'), or a descriptor alone (reopen).  The copy
 * reaches the system through this table only, so that a test can record
 * or disturb each call (tests/unit/test_copy.c).  xattrs of device nodes
 * and fifos, which cannot be opened safely, go through /proc/self/fd/N of
 * an O_PATH descriptor (the inode itself, no name lookup).
 */
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

/* A source entry's xattrs (ACLs are the system.posix_acl_* ones): @len
 * bytes of "name\0" u32 length, value, repeated. */
struct copy_xattrs {
	char *buf;
	size_t len;
};

/* What a copy of one entry could not keep because the destination's
 * filesystem refused it (an xattr: EOPNOTSUPP, E2BIG, ENOSPC of the xattr
 * block, EPERM/EACCES for a trusted.* or security.* name, EINVAL, ERANGE;
 * file flags): the entry is copied without it, and this says so, for a
 * warning.  Zeroed by the caller. */
struct copy_lost {
	unsigned n; /* attributes lost */
	int err; /* the first one's, negative */
	char what[300]; /* the first one: "extended attribute 'NAME'", "file flags" */
};

/* notes the attribute @what (followed by @name quoted, unless NULL) lost
 * with @err (negative) */
void copy_lost_add(struct copy_lost *lost, int err, const char *what, const char *name);

/* "extended attribute 'user.x' not kept: No space left on device (and N
 * more)" into @buf, for a message */
const char *copy_lost_text(const struct copy_lost *lost, char *buf, size_t len);

/* What a directory's copy gets once everything below it is written
 * (copy.c's last step): times, mode, owner, xattrs, file flags. */
struct copy_dirmeta {
	char *rel; /* path below the destination root; "" for the root */
	struct stat st;
	unsigned fflags; /* FS_IOC_GETFLAGS bits to set; 0: none */
	struct copy_xattrs xa;
};

/**
 * copy_xattrs_read:
 * @fd: an open (not O_PATH) descriptor of the source inode, or an O_PATH
 *      one when @viaproc
 * @viaproc: read through /proc/self/fd/@fd (device nodes, fifos)
 * @ret: filled with the xattrs (buf NULL when there are none); free
 *       ret->buf
 *
 * Returns: 0; negative errno (-ENOMEM).  A filesystem without xattrs
 * (-EOPNOTSUPP) gives none.
 */
int copy_xattrs_read(int fd, bool viaproc, struct copy_xattrs *ret);

/* a walk over the xattrs of a struct copy_xattrs, in its order */
struct copy_xattr_iter {
	const char *p, *end;
};

static inline struct copy_xattr_iter copy_xattr_iter_of(const struct copy_xattrs *xa)
{
	return (struct copy_xattr_iter){ xa ? xa->buf : NULL, xa && xa->buf ? xa->buf + xa->len : NULL };
}

/* The next xattr of the walk @it: its name, its value (not NUL-ended) and
 * the value's length in bytes, pointing into the struct copy_xattrs.
 * Returns: false past the last. */
bool copy_xattrs_next(struct copy_xattr_iter *it, const char **ret_name, const char **ret_val,
		      uint32_t *ret_vlen);

/* The value of the xattr @name in @xa (not NUL-ended; its length in
 * *@ret_vlen), or NULL when @xa has none of that name. */
const char *copy_xattrs_find(const struct copy_xattrs *xa, const char *name, uint32_t *ret_vlen);

/* storaged's own xattrs (the sync's working directory mark, the area's
 * sync baseline): only root may set trusted.* (xattr(7)); never copied */
#define COPY_OWN_XATTRS "trusted.storaged."

/**
 * copy_xattr_is_own:
 * @name: an xattr's name
 *
 * Returns: whether it is one of storaged's own (COPY_OWN_XATTRS), which
 * copy_xattrs_read() leaves out.
 */
bool copy_xattr_is_own(const char *name);

/**
 * copy_xattrs_prune:
 * @fd: open descriptor of a copy storaged made earlier (a directory kept
 *      by the incremental sync back)
 * @xa: the source's xattrs now
 *
 * Removes the xattrs of @fd that @xa has not (storaged's own aside), so
 * that copy_xattrs_write() then leaves exactly @xa.
 *
 * Returns: 0; negative errno of the first failed fremovexattr().
 */
int copy_xattrs_prune(int fd, const struct copy_xattrs *xa);

/**
 * copy_xattrs_write:
 * @fd: open descriptor of the copy, or O_PATH one when @viaproc
 * @xa: from copy_xattrs_read()
 * @lost: NULL, or where an xattr the destination refuses is noted (then
 *        skipped: struct copy_lost says which errors)
 *
 * Returns: 0; negative errno of the first failed fsetxattr() (a
 * destination that takes no xattrs of a namespace, -EOPNOTSUPP, is skipped).
 */
int copy_xattrs_write(int fd, bool viaproc, const struct copy_xattrs *xa, struct copy_lost *lost);

/**
 * copy_data:
 * @in: open source file, read from offset 0
 * @out: empty destination file open for writing
 * @size: bytes to copy (fstat of @in); holes stay holes (SEEK_DATA/HOLE)
 * @buf, @bufsize: scratch buffer
 * @bytes: incremented by the bytes copied (progress)
 * @sparse: @in may have holes (fewer blocks than its size): look for them
 *
 * Returns: 0; negative errno (-ENOSPC, -EIO).
 */
int copy_data(int in, int out, off_t size, char *buf, size_t bufsize, atomic_uint_fast64_t *bytes,
	      bool sparse);

/**
 * copy_fflags_get:
 * @fd: open (not O_PATH) descriptor of a file or directory
 *
 * Returns: the inode flags (FS_IOC_GETFLAGS, linux/fs.h) that a copy
 * keeps (append-only, immutable, nodump, noatime, sync, dirsync, nocow,
 * project inherit); 0 when none or unsupported.
 */
unsigned copy_fflags_get(int fd);

/**
 * copy_meta_fd:
 * @fd: open descriptor of the copy (a file or directory storaged created)
 * @st: the source's fstat()
 * @xa: its xattrs, or NULL
 * @fflags: from copy_fflags_get()
 * @lost: NULL, or where an xattr or the file flags the destination
 *        refuses are noted (struct copy_lost), and the copy goes on
 *
 * Sets, in this order: owner, xattrs (after chown, which drops
 * security.capability), mode with setuid/setgid (after chown, which drops
 * them), atime/mtime, file flags (last: immutable forbids the others).
 *
 * Returns: 0; negative errno.
 */
int copy_meta_fd(int fd, const struct stat *st, const struct copy_xattrs *xa, unsigned fflags,
		 struct copy_lost *lost);

/**
 * copy_fflags_add:
 * @fd: open (not O_PATH) descriptor of the copy
 * @want: FS_IOC_GETFLAGS bits to add
 * @lost: NULL, or where flags the filesystem has not are noted
 *
 * A filesystem that has not some of them (tmpfs has few) keeps what it
 * can, as libarchive did.
 *
 * Returns: 0; negative errno of FS_IOC_SETFLAGS other than "not supported".
 */
int copy_fflags_add(int fd, unsigned want, struct copy_lost *lost);

/**
 * copy_open_data:
 * @sys: the calls (reopen)
 * @fd: O_PATH descriptor of a regular file of the source
 *
 * Opens @fd's inode for reading as any other opener would: blocking, so
 * that a lease on it is broken the kernel's way (the holder is told and
 * has at most /proc/sys/fs/lease-break-time seconds: fcntl(2), "Leases"),
 * where O_NONBLOCK would fail at once with EWOULDBLOCK; an open that is
 * interrupted or busy (EINTR, EAGAIN, EBUSY) is tried again, up to 4
 * times 100 ms apart.
 *
 * Returns: the new descriptor (the caller's to close); negative errno.
 */
int copy_open_data(const struct copy_sys *sys, int fd);

/**
 * copy_node_fd:
 * @sys: call table
 * @fd: O_PATH descriptor of the source, a non-directory (not a socket)
 * @st: its fstat()
 * @dirfd: directory to create the copy in
 * @w: the copy's name there (must not exist)
 * @buf, @bufsize: scratch buffer for the data
 * @fflags: receives the source's file flags, which are NOT set on the
 *          copy (an immutable or append-only file could not be renamed
 *          or linked into place): the caller sets them last
 * @lost: as for copy_meta_fd()
 *
 * Copies a regular file (data, holes), symbolic link, device node or fifo
 * with its owner, xattrs, mode and times, from the descriptor alone.
 *
 * Returns: 0; negative errno.
 */
int copy_node_fd(const struct copy_sys *sys, int fd, const struct stat *st, int dirfd,
		 const char *w, char *buf, size_t bufsize, unsigned *fflags, struct copy_lost *lost);

/**
 * copy_open_beneath:
 * @sys: call table
 * @rootfd: destination root directory
 * @rel: relative path of a directory below it ("" or NULL: @rootfd)
 *
 * Opens a directory the copy created, one component at a time with
 * O_NOFOLLOW | O_DIRECTORY (no symbolic link, no "..").
 *
 * Returns: a new descriptor; negative errno (-ELOOP, -ENOTDIR, -EINVAL
 * for a ".." component).
 */
int copy_open_beneath(const struct copy_sys *sys, int rootfd, const char *rel);

#endif
