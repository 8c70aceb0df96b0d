/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What libmount does to an entry's options between the fstab and mount(2)
 * (util-linux libmount/src/context_mount.c fix_optstr(),
 * hook_selinux.c hook_prepare_options(), 2.38-2.41), for the mounts
 * storaged makes itself with the new mount API (mountfd.h): a tmpfs with
 * uid=portage mounts there as mount(8) mounts it.  For the mounts that go
 * through libmount the same steps change nothing libmount would not.
 */
#ifndef STORAGED_MOUNTOPT_H
#define STORAGED_MOUNTOPT_H

#include <stdbool.h>
#include <stddef.h>

/* The security modules that take mount options, as libmount asks. */
struct mountopt_lsm {
	bool selinux; /* selinuxfs mounted ("enforce" there): what
		       * libselinux is_selinux_enabled() looks at first */
	bool smack; /* /sys/fs/smackfs there (context_mount.c fix_optstr()) */
};

/** mountopt_lsm_running: the running kernel's (struct mountopt_lsm). */
struct mountopt_lsm mountopt_lsm_running(void);

/*
 * @options: an fstab options string (storaged's own options stripped), or NULL
 * @lsm: mountopt_lsm_running(), or a test's answer
 * @ret: @options with libmount's userspace steps done (caller frees); NULL
 *       when @options is NULL or nothing is left
 * @why, @whylen: on -ENOENT, what failed and what to write instead
 *
 * The steps, as libmount takes them:
 *  1. uid= and gid= of any filesystem: a name (anything but digits) becomes
 *     its number from the user or group database (getpwnam_r(3),
 *     getgrnam_r(3), so NSS too); "useruid" and "usergid" are the caller's
 *     own (storaged runs as root: 0).
 *  2. Without SELinux, context=, fscontext=, defcontext=, rootcontext= and
 *     seclabel are dropped (the kernel would refuse them: no security
 *     module takes them).  With SELinux they are kept as written:
 *     libmount's translation by mcstrans (selinux_trans_to_raw_context())
 *     is not done.
 *  3. Without Smack, smackfsdef=, smackfsfloor=, smackfshat=, smackfsroot=
 *     and smackfstransmute= are dropped (libmount built with Smack, as
 *     Debian's and Fedora's are).
 *
 * Returns: 0; -ENOENT when a name is in no database (@why says which);
 * -ENOMEM.
 */
int mountopt_userspace(const char *options, struct mountopt_lsm lsm, char **ret, char *why, size_t whylen);

/*
 * @options: an fstab options string, or NULL
 * @why, @whylen: as mountopt_userspace()
 *
 * Step 1 of mountopt_userspace() as a check: for `storaged check`.
 * Returns: true when a uid= or gid= name is in no database (@why set).
 */
bool mountopt_unknown_id(const char *options, char *why, size_t whylen);

#endif
