/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libmount's userspace steps on an entry's options (mountopt.h). */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libmount.h>

#include "mountopt.h"
#include "shared/util.h"

struct mountopt_lsm mountopt_lsm_running(void)
{
	return (struct mountopt_lsm){ .selinux = access("/sys/fs/selinux/enforce", F_OK) == 0,
				      .smack = access("/sys/fs/smackfs", F_OK) == 0 };
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* The user's or group's number for @name (getpwnam_r(3)/getgrnam_r(3),
 * so NSS too), growing the buffer on ERANGE as the man page says.
 * Returns: 0; -ENOENT when @name is in no database; another negative errno
 * when the lookup itself failed. */
static int lookup_id(bool user, const char *name, unsigned long *ret_id)
{
	size_t len = 1024;
	int r;

	for (;;) {
		_cleanup_free_ char *buf = malloc(len);
		struct passwd pwd, *pw = NULL;
		struct group grp, *gr = NULL;

		if (!buf)
			return -ENOMEM;
		r = user ? getpwnam_r(name, &pwd, buf, len, &pw) : getgrnam_r(name, &grp, buf, len, &gr);
		if (r == ERANGE && len < (1u << 20)) {
			len *= 4;
			continue;
		}
		if (r != 0)
			return -r;
		if (!pw && !gr)
			return -ENOENT;
		*ret_id = user ? (unsigned long)pw->pw_uid : (unsigned long)gr->gr_gid;
		return 0;
	}
}

/* @name's number as "%u" in @num.  Returns: 0, or -ENOENT with @why (a
 * lookup that failed is reported as one, with its errno's text: the
 * kernel cannot take the name either way). */
static int id_of(const char *key, const char *name, char *num, size_t numlen, char *why, size_t whylen)
{
	bool user = strcmp(key, "uid") == 0;
	unsigned long id = 0;
	int r;

	if (strcmp(name, user ? "useruid" : "usergid") == 0) {
		id = user ? (unsigned long)getuid() : (unsigned long)getgid();
	} else if ((r = lookup_id(user, name, &id)) < 0) {
		if (r == -ENOMEM)
			return r;
		snprintf(why, whylen,
			 "option '%s=%s': %s '%s' is not in the %s database (%s(3)%s%s), so it has no number for the kernel: create the %s (%s --system %s) or write %s=NUMBER",
			 key, name, user ? "user" : "group", name, user ? "user" : "group",
			 user ? "getpwnam_r" : "getgrnam_r", r != -ENOENT ? ": " : "", r != -ENOENT ? strerror(-r) : "",
			 user ? "user" : "group", user ? "useradd" : "groupadd", name, key);
		return -ENOENT;
	}
	snprintf(num, numlen, "%lu", id);
	return 0;
}

static bool is_in(const char *name, const char *const *names)
{
	for (; *names; names++)
		if (strcmp(name, *names) == 0)
			return true;
	return false;
}

/* An option of a security module that is not running. */
static bool lsm_absent_option(const char *name, struct mountopt_lsm lsm)
{
	static const char *const selinux[] = { "context", "fscontext", "defcontext", "rootcontext", "seclabel", NULL };
	static const char *const smack[] = { "smackfsdef", "smackfsfloor", "smackfshat", "smackfsroot",
					     "smackfstransmute", NULL };

	return (!lsm.selinux && is_in(name, selinux)) || (!lsm.smack && is_in(name, smack));
}

/* One option of @options, done as libmount does it, appended to @out. */
static int one_option(const char *name, const char *value, struct mountopt_lsm lsm, char **out, char *why, size_t whylen)
{
	char num[32];
	int r;

	if (lsm_absent_option(name, lsm))
		return 0;
	if (value && (strcmp(name, "uid") == 0 || strcmp(name, "gid") == 0) && !all_digits(value)) {
		r = id_of(name, value, num, sizeof(num), why, whylen);
		if (r < 0)
			return r;
		value = num;
	}
	return mnt_optstr_append_option(out, name, value) < 0 ? -ENOMEM : 0;
}

int mountopt_userspace(const char *options, struct mountopt_lsm lsm, char **ret, char *why, size_t whylen)
{
	_cleanup_free_ char *copy = options ? strdup(options) : NULL;
	char *it = copy, *out = NULL, *n, *v;
	size_t nsz, vsz;
	int r = 0;

	*ret = NULL;
	if (!options)
		return 0;
	if (!copy)
		return -ENOMEM;
	while (r == 0 && mnt_optstr_next_option(&it, &n, &nsz, &v, &vsz) == 0) {
		_cleanup_free_ char *name = strndup(n, nsz), *value = v ? strndup(v, vsz) : NULL;

		r = !name || (v && !value) ? -ENOMEM : one_option(name, value, lsm, &out, why, whylen);
	}
	if (r < 0 || !out || !*out) {
		free(out);
		return r;
	}
	*ret = out;
	return 0;
}

bool mountopt_unknown_id(const char *options, char *why, size_t whylen)
{
	_cleanup_free_ char *out = NULL;

	/* every module on: nothing dropped, every uid=/gid= looked at */
	return mountopt_userspace(options, (struct mountopt_lsm){ true, true }, &out, why, whylen) == -ENOENT;
}
