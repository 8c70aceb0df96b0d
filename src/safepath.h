/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Mount points and area paths must not lead through a symbolic link that a
 * user other than root could have planted: a link in a directory others can
 * write would let them redirect a root-owned mount anywhere.
 */
#ifndef STORAGED_SAFEPATH_H
#define STORAGED_SAFEPATH_H

#include <stddef.h>

/**
 * safepath_check:
 * @path: absolute path (need not exist entirely: the walk stops at the
 *        first missing component, which X-mount.mkdir may create)
 * @why: on refusal, a message naming the offending component and its owner
 * @len: size of @why in bytes
 *
 * Walks @path from "/" one component at a time with O_PATH|O_NOFOLLOW
 * (openat(2)), and refuses a symbolic link unless it and the directory it
 * sits in are owned by root and that directory is not writable by group or
 * others.  Links that pass are followed, and the walk goes on from their
 * target (at most 40 links, as the kernel's MAXSYMLINKS).
 *
 * Returns: 0 when safe (or the rest is missing); -EPERM for an untrusted
 * link (@why says which); -ELOOP for too many links; -ENOTDIR, -EINVAL or
 * another negative errno from openat(2)/fstatat(2).
 */
int safepath_check(const char *path, char *why, size_t len);

#endif
