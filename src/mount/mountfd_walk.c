/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Walk, then mount on what the walk opened (mountfd_walk.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libmount.h>

#include "kernlog.h"
#include "mount_helper.h"
#include "mountfd_walk.h"
#include "umount.h"
#include "view.h"
#include "shared/util.h"
#include "shared/optstr.h"

/* The descriptors one mount's walks opened. */
struct walked {
	int target, source;
	/* the kept directory the mount point was opened in, when only root
	 * can change what the mount point's path names (borrowed from the
	 * pass's cache), else -1 */
	int fixed_parent;
	bool target_fixed; /* only root can change what the mount point's path names */
};

static int refuse(char *msg, size_t len, const char *what, const char *path, int r, const char *why)
{
	snprintf(msg, len, "refusing to mount: %s '%s': %s", what, path, r == -EPERM ? why : strerror(-r));
	return r;
}

/* X-mount.mkdir[=MODE] (fstab.c checked MODE is octal): the mode of the
 * directories to make, or 0. */
static mode_t mkdir_mode(const char *options)
{
	static const char *const names[] = { "X-mount.mkdir", "x-mount.mkdir" };
	char *v = NULL;
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (optstr_get(options, names[i], &v, &n)) {
			if (!v || n == 0)
				return 0755; /* libmount's default */
			return (mode_t)strtoul(v, NULL, 8) ?: 0755;
		}
	return 0;
}

static int open_paths(const struct mountfd_request *rq, struct walked *w, char *msg, size_t len)
{
	const struct view_dir *parent = NULL;
	char why[512] = "";
	struct stat st;
	int r;

	r = view_open(rq->view, rq->target, mkdir_mode(rq->options), &w->target, &parent, why, sizeof(why));
	w->target_fixed = parent != NULL;
	if (r == -ENOENT) {
		snprintf(msg, len, "mount point '%s' does not exist: create it, or add X-mount.mkdir to the entry's options", rq->target);
		return r;
	}
	if (r < 0)
		return refuse(msg, len, "mount point", rq->target, r, why);
	/* the kernel's EINVAL says nothing of it (check says the same) */
	if (!rq->bind && fstat(w->target, &st) == 0 && !S_ISDIR(st.st_mode)) {
		snprintf(msg, len, "mount point '%s' is not a directory; correct the fstab entry", rq->target);
		return -ENOTDIR;
	}
	/* a bind source, or a loop image: checked, and opened, the same way */
	if ((rq->bind || optstr_get(rq->options, "loop", NULL, NULL)) && rq->source[0] == '/') {
		/* the walk may let the target's parent go from the cache */
		parent = NULL;
		r = view_open(rq->view, rq->source, 0, &w->source, NULL, why, sizeof(why));
		if (r == -ENOENT) {
			snprintf(msg, len, "%s '%s': %s", rq->bind ? "bind source" : "loop image",
				 rq->source, strerror(ENOENT));
			return r;
		}
		if (r < 0)
			return refuse(msg, len, rq->bind ? "bind source" : "loop image", rq->source,
				      r, why);
	}
	w->fixed_parent = parent ? parent->fd : -1;
	return 0;
}

/* Which mounts go by the new API: binds, and a tmpfs or ramfs with no
 * mount helper, whose options it takes. */
static bool by_new_api(const struct mountfd_request *rq)
{
	if (optstr_get(rq->options, "loop", NULL, NULL))
		return false;
	return rq->bind || (rq->no_helper &&
			    (strcmp(rq->fstype, "tmpfs") == 0 || strcmp(rq->fstype, "ramfs") == 0));
}

/* A tmpfs or ramfs on a mount point whose name only root can change:
 * mount(2), one system call (mountfd_fs_at()).  Returns: 0 with the
 * IDs in @out; -EAGAIN when it does not apply or failed (the new API then
 * tries again and tells the kernel's reason). */
static int mount_fs_fast(const struct mountfd_ops *ops, const struct mountfd_request *rq,
			 const struct walked *w, const struct mountfd_opts *o, struct mount_reply *out)
{
	if (rq->bind || w->fixed_parent < 0 ||
	    mountfd_fs_at(ops, rq->fstype, rq->source, o, w->fixed_parent,
			  strrchr(rq->target, '/') + 1, w->target, &out->mount) < 0)
		return -EAGAIN;
	return 0;
}

static int mount_new_api(const struct mountfd_ops *ops, const struct mountfd_request *rq,
			 const struct walked *w, const struct mountfd_opts *o, int *ret_mnt_fd,
			 char *msg, size_t len)
{
	char why[512] = "";
	int r;

	if (rq->bind)
		r = mountfd_bind(ops, w->source, w->target, o->rbind, o->attr, o->propagation, ret_mnt_fd);
	else
		r = mountfd_fs(ops, rq->fstype, rq->source, o, 0, w->target, ret_mnt_fd, why, sizeof(why));
	if (r < 0)
		snprintf(msg, len, "mounting %s on '%s': %s%s%s", rq->bind ? rq->source : rq->fstype,
			 rq->target, strerror(-r), why[0] ? "; the kernel says: " : "", why);
	return r;
}

/* A device named by a tag (LABEL=, UUID=, ...) or through links in /dev,
 * as libmount would have resolved it with canonicalisation on; other
 * sources ("server:/export", "tmpfs") as they are.  NULL: a tag that
 * names no device (or no memory). */
static char *resolve_source(const char *spec)
{
	char *r;

	if (mnt_tag_is_valid(spec))
		return mnt_resolve_spec(spec, NULL);
	if (spec[0] == '/' && (r = mnt_resolve_path(spec, NULL)))
		return r;
	return strdup(spec);
}

/*
 * Why a mount by libmount failed, in @msg (which holds libmount's words):
 * the kernel's own lines on it, read from @klog since the attempt,
 * libmount's "wrong fs type, bad option, ..." says nothing of the cause;
 * a helper's exit status where libmount gives no words.  Returns: the
 * mount(2) errno when libmount called it, else -EIO.
 */
static int failure_reason(struct libmnt_context *cxt, const struct mountfd_request *rq,
			  const char *dev, int klog, const char *helper_said, char *msg, size_t len)
{
	char device[64], kernel[768] = "";
	size_t n = strlen(msg);
	int err = mnt_context_syscall_called(cxt) ? mnt_context_get_syscall_errno(cxt) : 0;

	if (!msg[0] && mnt_context_helper_executed(cxt))
		snprintf(msg, len, "mount.%s failed with status %d%s%s", rq->fstype[0] ? rq->fstype : "?",
			 mnt_context_get_helper_status(cxt), helper_said[0] ? ": " : "", helper_said);
	if (rq->rw_only && (err == EROFS || err == EACCES)) {
		n = strlen(msg);
		snprintf(msg + n, len - n, "%s'%s' is write-protected and the entry says x-systemd.rw-only, so it is not mounted read-only: make the device writable (blockdev --setrw) or drop x-systemd.rw-only to mount it read-only",
			 n ? "; " : "", dev ? dev : rq->source);
	}
	kernlog_device_name(dev, device, sizeof(device));
	if (klog >= 0 && kernlog_collect(klog, device, rq->fstype, kernel, sizeof(kernel)) > 0) {
		n = strlen(msg);
		snprintf(msg + n, len - n, "%sthe kernel says: %s", n ? "; " : "", kernel);
	}
	return err > 0 ? -err : -EIO;
}

/* What libmount is given as the mount point and the source: the entry's
 * own names for a helper, which checks them, writes them to utab and
 * prints them; else the walked descriptors' magic links. */
struct libmount_names {
	char target[32], source[32];
	const char *tgt, *src;
	char *opts; /* owned */
};

static int libmount_names(const struct mountfd_request *rq, const struct walked *w, const char *dev,
			  struct libmount_names *n)
{
	n->opts = NULL;
	if (rq->helper) {
		n->tgt = rq->target;
		n->src = dev;
		return rq->options[0] ? mount_helper_options(rq->options, &n->opts) : 0;
	}
	mountfd_fd_path(w->target, n->target, sizeof(n->target));
	n->tgt = n->target;
	n->src = dev;
	if (w->source >= 0) {
		mountfd_fd_path(w->source, n->source, sizeof(n->source));
		n->src = n->source;
	}
	if (rq->options[0] && !(n->opts = strdup(rq->options)))
		return -ENOMEM;
	return 0;
}

/*
 * libmount, /etc/fstab never read and canonicalisation off (it would turn
 * a magic link back into a name, or resolve the name a helper is to get).
 * The descriptors lose O_CLOEXEC so that a mount helper libmount runs
 * reaches the same ones.
 */
static int mount_libmount(struct libmnt_context *cxt, const struct mountfd_request *rq,
			  const struct walked *w, char *msg, size_t len)
{
	_cleanup_free_ char *dev = resolve_source(rq->source);
	struct libmount_names names;
	struct kernlog_stderr helper;
	char helper_said[512];
	_cleanup_close_ int klog = -EBADF;
	int rc;

	if (w->source < 0 && !dev) {
		snprintf(msg, len, "can't find %s", rq->source);
		return -ENOENT;
	}
	rc = libmount_names(rq, w, dev, &names);
	if (rc < 0)
		return rc;
	fcntl(w->target, F_SETFD, 0);
	if (w->source >= 0)
		fcntl(w->source, F_SETFD, 0);
	mnt_context_set_optsmode(cxt, MNT_OMODE_IGNORE | MNT_OMODE_NOTAB);
	/* also turns off the evaluation of tags: done here, as it was */
	mnt_context_disable_canonicalize(cxt, 1);
	mnt_context_set_source(cxt, names.src);
	mnt_context_set_target(cxt, names.tgt);
	if (rq->fstype[0])
		mnt_context_set_fstype(cxt, rq->fstype);
	/* `bg`: mount.nfs would exit 0 and go on trying in the background,
	 * out of the deadline's reach; systemd drops it the same way */
	if (names.opts)
		mnt_optstr_remove_option(&names.opts, "bg");
	if (names.opts && names.opts[0])
		mnt_context_set_options(cxt, names.opts);
	/* libmount's read-only retry of a write-protected device is off, as
	 * `mount -w` turns it off (systemd passes -w for x-systemd.rw-only);
	 * set either way: mnt_reset_context() keeps this flag */
	mnt_context_enable_rwonly_mount(cxt, rq->rw_only);
	klog = kernlog_open();
	/* a helper says why on its stderr: kept for the message too */
	if (rq->no_helper || kernlog_stderr_begin(&helper) < 0)
		helper = (struct kernlog_stderr){ .capture = -1, .saved = -1 };
	rc = mnt_context_mount(cxt);
	kernlog_stderr_end(&helper, helper_said, sizeof(helper_said));
	fcntl(w->target, F_SETFD, FD_CLOEXEC);
	if (w->source >= 0)
		fcntl(w->source, F_SETFD, FD_CLOEXEC);
	free(names.opts);
	rc = mnt_context_get_excode(cxt, rc, msg, len) == 0 ? 0 : -EIO;
	if (rc < 0)
		rc = failure_reason(cxt, rq, dev, klog, helper_said, msg, len);
	return rc;
}

/*
 * The IDs of the mount just made on the walked @target_fd, when no
 * descriptor of it came back (libmount): the topmost mount on that
 * directory (mountfd_top_id()); the rest of its identity only when the
 * name @mp still leads to that mount.
 */
static void ids_on(const struct mountfd_ops *ops, int target_fd, const char *mp, struct mount_reply *out)
{
	struct mount_identity now;
	uint64_t id = 0;

	if (mountfd_top_id(ops, target_fd, &id) < 0)
		return;
	out->mount.id = id;
	if (mount_identity_path(mp, &now) == 0 && now.id == id)
		out->mount = now;
}

/* Until the mount table has a mount on @target_fd other than @before;
 * ended by the caller's deadline (the process is killed). */
static int wait_mounted(const struct mountfd_ops *ops, int target_fd, uint64_t before)
{
	struct pollfd p = { .fd = view_watch_open(), .events = POLLPRI };
	uint64_t now = 0;
	int r;

	for (;;) {
		r = mountfd_top_id(ops, target_fd, &now);
		if ((r < 0 && r != -ENOENT) || (now && now != before))
			break;
		/* a timeout too: a change missed between the look and the poll */
		if (poll(&p, 1, p.fd >= 0 ? 1000 : 100) < 0 && errno != EINTR)
			break;
	}
	safe_close(p.fd);
	return now && now != before ? 0 : -EIO;
}

/* The helper's name for messages: "mount.nfs", as its path says. */
static const char *helper_name(const struct mountfd_request *rq, char *buf, size_t len)
{
	const char *slash = rq->helper ? strrchr(rq->helper, '/') : NULL;

	if (rq->helper)
		return slash ? slash + 1 : rq->helper;
	snprintf(buf, len, "mount.%s", rq->fstype[0] ? rq->fstype : "TYPE");
	return buf;
}

/*
 * A helper's mount is not on the walked directory: the name it was given
 * may have led elsewhere while it ran (a directory on the way renamed or
 * exchanged with a link).  Its mount there, when it is provably its own
 * (the one new mount of the entry's source since @before), is unmounted.
 * Returns: 0 when no mount of the source appeared (nothing was mounted);
 * -EXDEV with @msg when one or more did.
 */
static int helper_went_elsewhere(const struct mountfd_request *rq, struct libmnt_table *before,
				 const char *name, char *msg, size_t len)
{
	_cleanup_free_ char *dev = resolve_source(rq->source), *where = NULL;
	uint64_t id = 0;
	int r;

	if (!before || !dev)
		return 0;
	r = mount_helper_mounted_elsewhere(before, dev, &id, &where);
	if (r == -EEXIST) {
		snprintf(msg, len, "%s mounted nothing on '%s' (the directory storaged opened), but %s was mounted meanwhile on '%s' and elsewhere: a directory on the way was renamed or replaced, or another program mounts it too; left as they are: check them and unmount what does not belong there",
			 name, rq->target, dev, where);
		return -EXDEV;
	}
	if (r <= 0)
		return 0;
	r = umount_id(id, MNT_DETACH);
	snprintf(msg, len, "%s mounted %s on '%s', not on '%s': a directory on the way was renamed or replaced while it ran (a user can change the names there); %s%s",
		 name, dev, where, rq->target,
		 r == 0 ? "unmounted it there" : "could not unmount it there: ",
		 r == 0 ? "" : strerror(-r));
	return -EXDEV;
}

/*
 * libmount said yes: is there a new mount on the walked directory?  A
 * helper whose mount went elsewhere fails (helper_went_elsewhere()).  A
 * helper may have exited 0 with nothing mounted (mount.nfs `bg`, a FUSE
 * helper that mounts later): @rq->pending is told and the mount is waited
 * for; a mount(2) that said yes, or no @pending: a failure at once, as
 * systemd reports it ("Mount process finished, but there is no mount").
 */
static int check_mounted(const struct mountfd_ops *ops, struct libmnt_context *cxt,
			 const struct mountfd_request *rq, int target_fd, uint64_t before,
			 struct libmnt_table *table_before, char *msg, size_t len)
{
	uint64_t now = 0;
	char buf[64];
	const char *name = helper_name(rq, buf, sizeof(buf));
	int r;

	if (mountfd_top_id(ops, target_fd, &now) >= 0 && now != before)
		return 0;
	if (!mnt_context_helper_executed(cxt)) {
		snprintf(msg, len, "mount(2) said it was mounted, but nothing new is mounted on '%s'", rq->target);
		return -EIO;
	}
	r = helper_went_elsewhere(rq, table_before, name, msg, len);
	if (r < 0)
		return r;
	if (!rq->pending) {
		snprintf(msg, len, "%s exited 0, but nothing is mounted on '%s': the mount process finished, but there is no mount; run 'mount %s' by hand to see what the helper does",
			 name, rq->target, rq->target);
		return -EIO;
	}
	snprintf(msg, len, "%s exited 0, but nothing is mounted on '%s' yet: not yet mounted, waiting for it up to the mount timeout",
		 name, rq->target);
	rq->pending(rq->userdata, msg);
	msg[0] = '\0';
	if (wait_mounted(ops, target_fd, before) == 0)
		return 0;
	snprintf(msg, len, "%s exited 0, but nothing was mounted on '%s'", name, rq->target);
	return -EIO;
}

int mountfd_walk_mount(const struct mountfd_ops *ops, struct libmnt_context *cxt,
		       const struct mountfd_request *rq, struct mount_reply *out)
{
	struct walked w = { .target = -1, .source = -1, .fixed_parent = -1 };
	struct mountfd_opts o = { 0 };
	struct libmnt_context *own = NULL;
	char fdpath[32];
	ssize_t n;
	int mfd = -1, r;

	out->mount = (struct mount_identity){ 0 };
	out->mountpoint[0] = out->message[0] = '\0';
	r = open_paths(rq, &w, out->message, sizeof(out->message));
	if (r < 0)
		goto out;
	if (by_new_api(rq) && mountfd_parse_options(rq->options, &o) == 0 && (!rq->bind || w.source >= 0)) {
		r = mount_fs_fast(ops, rq, &w, &o, out);
		if (r < 0)
			r = mount_new_api(ops, rq, &w, &o, &mfd, out->message, sizeof(out->message));
	} else {
		/* what a helper mounts elsewhere is found against this */
		struct libmnt_table *table_before = rq->helper ? view_read_table(VIEW_MOUNTINFO) : NULL;
		uint64_t before = 0;

		if (!cxt)
			cxt = own = mnt_new_context();
		mountfd_top_id(ops, w.target, &before);
		r = cxt ? mount_libmount(cxt, rq, &w, out->message, sizeof(out->message)) : -ENOMEM;
		if (r == 0)
			r = check_mounted(ops, cxt, rq, w.target, before, table_before, out->message,
					  sizeof(out->message));
		mnt_unref_table(table_before);
	}
	if (r < 0)
		goto out;
	/* where the walked directory is now, as the mount table names it:
	 * the path itself, when only root could have changed what it names */
	if (w.target_fixed && strlen(rq->target) < sizeof(out->mountpoint)) {
		strcpy(out->mountpoint, rq->target);
	} else {
		mountfd_fd_path(w.target, fdpath, sizeof(fdpath));
		n = readlink(fdpath, out->mountpoint, sizeof(out->mountpoint) - 1);
		out->mountpoint[n > 0 ? n : 0] = '\0';
	}
	if (mfd >= 0) {
		mount_identity_at(ops, mfd, "", &out->mount);
	} else if (out->mountpoint[0] && !out->mount.id) {
		ids_on(ops, w.target, out->mountpoint, out);
	}
out:
	mountfd_opts_done(&o);
	safe_close(mfd);
	safe_close(w.target);
	safe_close(w.source);
	mnt_free_context(own);
	out->error = r;
	return r;
}
