/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Predictions (predict.h): each rule is a check start makes when the step
 * runs, made here on the same facts, so that --dry-run and check show the
 * failure with start's own reason.  The rules are the rows of rules[]
 * below, each citing the kernel, libmount or mkfs code it follows:
 *   - areas: size against RAM + swap, ext inode tables
 *     against size, the copy helper for seed or persist areas, a zram
 *     compressor the kernel has;
 *   - waits: a device not present fails at its deadline;
 *   - mounts, from the options alone: the filesystem type, overlay's
 *     layers, tmpfs's numbers, "degraded" off btrfs, btrfs members
 *     missing under degraded = no;
 *   - mounts, on this machine's paths (predict_system.c): the mount
 *     point, a bind or loop source, a block device's source, the
 *     directories of an overlay.
 * Only paths not below another step's mount point or area are checked:
 * what lies below those is not there before the step runs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "copy/copy.h"
#include "copy/copy_spawn.h"
#include "mount/mountopt.h"
#include "parse/area_facts.h"
#include "shared/units.h"
#include "plan/area_size.h"
#include "predict_internal.h"
#include "shared/optstr.h"
#include "shared/util.h"

/* ------------------------------------------------------------ recording */

int predict__record(struct predictor *pr, size_t i, const char *fmt, ...)
{
	char *why = NULL, **v;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&why, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	v = realloc(pr->out->why, (pr->out->n + 1) * sizeof(*v));
	if (!v) {
		free(why);
		return -ENOMEM;
	}
	pr->out->why = v;
	v[pr->out->n++] = why;
	pr->p->steps[i].predicted = why;
	return 1;
}

const char *predict__fstab_file(const struct predictor *pr)
{
	return pr->in->fstab && pr->in->fstab->file ? pr->in->fstab->file : "fstab";
}

/* ------------------------------------------------------------ areas and waits */

/* The rules of an area apply once start knows its size: a seed that does
 * not fit is said first (the plan shows it). */
static bool area_sized(const struct plan_step *s)
{
	return !s->sizing_deferred && !(s->area->seed && !s->sizing.fits);
}

/* The same test as area.c's check_memory(), on the same meminfo facts. */
static int rule_area_memory(struct predictor *pr, size_t i)
{
	const struct plan_step *s = &pr->p->steps[i];
	const struct area_config *a = s->area;
	uint64_t avail = sysinfo_memory_room(&pr->ps->mem);
	char x[24], y[24];

	if (!area_sized(s) || a->force || !avail || s->sizing.size_bytes <= avail)
		return 0;
	return predict__record(pr, i, "area '%s': size %s is above RAM + swap (%s): lower size= or set force = yes",
			       a->name, units_format_size(s->sizing.size_bytes, x, sizeof(x)),
			       units_format_size(avail, y, sizeof(y)));
}

/* mke2fs refuses more inodes than 2^32 - 1, or inode tables that leave no
 * room for the filesystem. */
static int rule_area_ext_inodes(struct predictor *pr, size_t i)
{
	const struct plan_step *s = &pr->p->steps[i];
	const struct area_config *a = s->area;
	bool ext = area_fstype_is_ext(area_fstype(a));
	char x[24], y[24];

	if (!area_sized(s) || !ext ||
	    (s->sizing.nr_inodes <= UINT32_MAX && s->sizing.nr_inodes <= s->sizing.size_bytes / AREA_EXT_INODE_SIZE))
		return 0;
	return predict__record(
		pr, i,
		"area '%s': %" PRIu64
		" inodes need %s of inode tables (%d bytes each), more than the area's size %s: lower inodes= or raise size=",
		a->name, s->sizing.nr_inodes,
		units_format_size(s->sizing.nr_inodes * AREA_EXT_INODE_SIZE, x, sizeof(x)),
		AREA_EXT_INODE_SIZE, units_format_size(s->sizing.size_bytes, y, sizeof(y)));
}

/* A seed or persist area copies with storaged-copy, found as start finds it. */
static int rule_area_copy_helper(struct predictor *pr, size_t i)
{
	const struct plan_step *s = &pr->p->steps[i];
	const struct area_config *a = s->area;
	struct copy_result res = { 0 };
	char prog[4096];

	if (!area_sized(s) || !(a->seed || a->persist) || copy_spawn_find(prog, sizeof(prog), &res) >= 0)
		return 0;
	return predict__record(pr, i, "area '%s': %s", a->name, res.msg);
}

static int rule_wait_device(struct predictor *pr, size_t i)
{
	const struct plan_step *s = &pr->p->steps[i];
	char w[32];

	if (s->timeout_usec == USEC_INFINITY)
		return 0; /* waits as long as it takes: does not fail */
	return predict__record(pr, i, "%s is not present: fails unless it appears within %s", s->spec,
		       units_format_duration(s->timeout_usec, w, sizeof(w)));
}

/* ------------------------------------------------------------ mount options */

/* "degraded" is the administrator's consent to a degraded btrfs mount
 * (plan.c strips it for btrfs); any other type gets it as a mount option
 * it does not know ("tmpfs: Unknown parameter 'degraded'").  It is not
 * dropped: the administrator wrote it, and may have meant another type.
 * Under type auto the type is not known here. */
static int rule_degraded(struct predictor *pr, size_t i)
{
	const struct fstab_entry *e = pr->p->steps[i].entry;

	if (e->bind || !e->fstype || streq(e->fstype, "auto") || streq(e->fstype, "none") ||
	    predict_fstype_in(e->fstype, (char *[]){ "btrfs", NULL }) ||
	    !optstr_get(e->mount_options, "degraded", NULL, NULL))
		return 0;
	return predict__record(pr, i, "'degraded' is a btrfs option; %s does not take it: remove it (%s:%u)",
		       e->fstype, predict__fstab_file(pr), e->line);
}

/* The kernel's memparse() of a tmpfs number: strtoull (base 0: 0x.., 0..)
 * with at least one digit, at most one suffix K M G T P E, and for size=
 * one '%' (a share of RAM); anything else is "Bad value" (EINVAL).
 * @v is @n bytes, not NUL-terminated. */
static bool tmpfs_number_ok(const char *v, size_t n, bool percent)
{
	char buf[64], *end;

	if (n == 0 || n >= sizeof(buf) || v[0] < '0' || v[0] > '9')
		return false;
	memcpy(buf, v, n);
	buf[n] = '\0';
	/* an overflow is no error to memparse(): size= wraps and mounts */
	(void)strtoull(buf, &end, 0);
	if (*end && strchr("kKmMgGtTpPeE", *end))
		end++;
	if (percent && *end == '%')
		end++;
	return *end == '\0';
}

/* tmpfs's size=, nr_blocks= and nr_inodes= as the kernel reads them
 * (mm/shmem.c, shmem_parse_one()): a value it refuses fails the mount. */
static int rule_tmpfs_numbers(struct predictor *pr, size_t i)
{
	static const char *const names[] = { "size", "nr_blocks", "nr_inodes" };
	const struct fstab_entry *e = pr->p->steps[i].entry;
	char *v;
	size_t n;

	if (!streq(e->fstype, "tmpfs") || !e->options)
		return 0;
	for (size_t k = 0; k < ARRAY_SIZE(names); k++)
		if (optstr_get(e->options, names[k], &v, &n) && !tmpfs_number_ok(v, v ? n : 0, k == 0))
			return predict__record(pr, i,
				       "tmpfs refuses %s=%.*s: write a whole number with at most one "
				       "suffix k, m, g, t, p or e%s (%s:%u)",
				       names[k], v ? (int)n : 0, v ? v : "",
				       k == 0 ? ", or a share of RAM such as 50%" : "",
				       predict__fstab_file(pr), e->line);
	return 0;
}

/* The parameters mm/shmem.c's shmem_fs_parameters[] takes (5.4-6.18; a
 * newer kernel's name is only known to that kernel); "source", which
 * fs/fs_context.c takes for every filesystem; and those a security module
 * takes first (security_fs_context_parse_param(): SELinux's
 * selinux_fs_context_parse_param(), Smack's smack_fs_context_parse_param()). */
static const char *const tmpfs_params[] = {
	"size", "nr_blocks", "nr_inodes", "mode", "uid", "gid", "huge", "mpol", "inode32", "inode64",
	"noswap", "quota", "usrquota", "grpquota", "usrquota_block_hardlimit",
	"usrquota_inode_hardlimit", "grpquota_block_hardlimit", "grpquota_inode_hardlimit",
	"casefold", "strict_encoding", "source", "context", "fscontext", "defcontext",
	"rootcontext", "seclabel", "smackfsdef", "smackfsfloor", "smackfshat", "smackfsroot",
	"smackfstransmute",
};

static bool tmpfs_knows(const char *name, size_t n)
{
	for (size_t k = 0; k < ARRAY_SIZE(tmpfs_params); k++)
		if (strlen(tmpfs_params[k]) == n && strncmp(tmpfs_params[k], name, n) == 0)
			return true;
	return false;
}

/* An option tmpfs does not take fails the mount: libmount hands every
 * option that is neither a mount flag nor userspace's (mnt_split_optstr())
 * to the kernel, which says "tmpfs: Unknown parameter" (EINVAL). */
static int rule_tmpfs_options(struct predictor *pr, size_t i)
{
	const struct fstab_entry *e = pr->p->steps[i].entry;
	_cleanup_free_ char *fs = NULL;
	char *it, *n, *v;
	size_t nsz, vsz;

	if (!streq(e->fstype, "tmpfs") || !e->mount_options ||
	    mnt_split_optstr(e->mount_options, NULL, NULL, &fs, 0, 0) < 0)
		return 0;
	for (it = fs; it && mnt_optstr_next_option(&it, &n, &nsz, &v, &vsz) == 0;)
		if (!tmpfs_knows(n, nsz))
			return predict__record(pr, i, "tmpfs does not take the option '%.*s' (the kernel refuses it: \"Unknown parameter\"): remove it or correct its spelling (%s:%u)",
					       (int)nsz, n, predict__fstab_file(pr), e->line);
	return 0;
}

/* libmount turns a uid= or gid= name into its number (of any filesystem,
 * context_mount.c fix_optstr()), as storaged does (mountopt.h): a name in
 * no database fails the mount before the kernel sees it. */
static int rule_id_names(struct predictor *pr, size_t i)
{
	const struct fstab_entry *e = pr->p->steps[i].entry;
	char why[512];

	if (!mountopt_unknown_id(e->mount_options, why, sizeof(why)))
		return 0;
	return predict__record(pr, i, "%s (%s:%u)", why, predict__fstab_file(pr), e->line);
}

static bool has_layer(const struct fstab_entry *e, const char *option)
{
	for (size_t k = 0; k < e->n_paths; k++)
		if (streq(e->paths[k].option, option))
			return true;
	return false;
}

/* Layers the kernel requires, known from the options alone: overlayfs
 * refuses a mount without a lower layer ("missing 'lowerdir'") and an upper
 * layer without a work directory ("missing 'workdir'"), with EINVAL
 * (fs/overlayfs/params.c, ovl_fs_params_verify()). */
static int rule_overlay_layers(struct predictor *pr, size_t i)
{
	const struct fstab_entry *e = pr->p->steps[i].entry;

	if (!streq(e->fstype, "overlay"))
		return 0;
	if (!has_layer(e, "lowerdir") && !has_layer(e, "lowerdir+"))
		return predict__record(pr, i, "an overlay needs a lower layer: add lowerdir=DIR (%s:%u)",
			       predict__fstab_file(pr), e->line);
	if (has_layer(e, "upperdir") && !has_layer(e, "workdir"))
		return predict__record(pr, i,
			       "upperdir= needs a work directory: add workdir=DIR, an empty directory on "
			       "the filesystem of the upper one (%s:%u)",
			       predict__fstab_file(pr), e->line);
	return 0;
}

/* Mount step @i waits on an ASSEMBLE step with members missing and may
 * not mount degraded: start fails it at the deadline, unless they come. */
static int rule_btrfs_members(struct predictor *pr, size_t i)
{
	const struct plan_step *s = &pr->p->steps[i];
	char w[32];

	if (!s->is_btrfs || s->degraded_allowed)
		return 0;
	for (size_t d = 0; d < s->n_deps; d++) {
		const struct plan_step *a = &pr->p->steps[s->deps[d].step];

		if (a->kind != PLAN_ASSEMBLE || !a->missing || a->done)
			continue;
		return predict__record(pr, i,
			       "btrfs %s: %s (%" PRIu64 "/%" PRIu64
			       " members present) and degraded = no: the mount fails unless the members appear within %s; attach them, or allow a degraded mount: " PLAN_DEGRADED_CONSENT,
			       a->fsid, a->missing, a->n_present, a->num_devices,
			       units_format_duration(a->timeout_usec, w, sizeof(w)), a->fsid);
	}
	return 0;
}

/* ------------------------------------------------------------ skips */

/* Step @s fails as the plan stands: its own prediction, a conflict, or a
 * seed that does not fit (plan_step_will_fail(), without the renderer). */
static bool fails(const struct plan_step *s)
{
	if (s->done || s->later)
		return false;
	return s->conflict || s->predicted ||
	       (s->kind == PLAN_AREA && !s->sizing_deferred && !s->sizing.fits);
}

/* Start does not run a step that waits on one that failed or was skipped
 * (exec.c, try_start()): it skips it, and says so; a mount whose own
 * device's wait failed fails, for the wait's reason.  Steps come in
 * execution order, so a dependency's prediction is already made. */
static int predict_skip(struct predictor *pr, size_t i)
{
	const struct plan_step *s = &pr->p->steps[i];

	for (size_t d = 0; d < s->n_deps; d++) {
		const struct plan_step *w = &pr->p->steps[s->deps[d].step];

		if (!fails(w))
			continue;
		if (s->kind == PLAN_MOUNT && plan_step_waits_for_own_device(s, w))
			return predict__record(pr, i, "%s", w->predicted ? w->predicted : w->note);
		return predict__record(pr, i, PLAN_PREDICTED_SKIP "waits on step %zu, which will fail",
				       s->deps[d].step + 1);
	}
	return 0;
}

/* ------------------------------------------------------------ the pass */

/*
 * The rules, one row each, as libmount's hooksets[] table (hooks.c): a
 * step's rules are tried in this order and the first that predicts a
 * failure gives the step its reason, as start stops at the first failure
 * too.  Each row names the code whose behaviour it copies, and the
 * versions it was checked against: when that code changes, the row is
 * what to re-read.  A rule that looks at this machine's paths runs only
 * when the plan's paths are this machine's (predict_sources.system_paths).
 * tests/integration/t-predict-agrees.sh runs --dry-run and start on the
 * same inputs and fails when they disagree.
 */
struct predict_rule {
	const char *name;
	enum plan_step_kind kind;
	bool system_paths;
	int (*check)(struct predictor *pr, size_t i); /* 1 predicted, 0, -ENOMEM */
	const char *follows;
};

static const struct predict_rule rules[] = {
	{ "area-memory", PLAN_AREA, false, rule_area_memory,
	  "storaged area.c check_memory(): MemTotal + SwapTotal of /proc/meminfo (Linux Documentation/filesystems/proc.rst), the measure of N% sizes" },
	{ "area-ext-inodes", PLAN_AREA, false, rule_area_ext_inodes,
	  "e2fsprogs misc/mke2fs.c: at most 2^32-1 inodes, inode tables inside the filesystem (1.46-1.47)" },
	{ "area-mkfs", PLAN_AREA, false, predict__mkfs,
	  "storaged area/area_backend.c make_fs(): mkfs.FS by spawn_find_program(); e2fsprogs misc/mke2fs.c -n computes the layout it would make (\"Not enough space to build proposed filesystem\"), 1.46-1.47" },
	{ "area-brd-driver", PLAN_AREA, false, predict__brd_driver,
	  "storaged area/area_backend.c brd_pick(): /sys/module/brd (Linux drivers/block/brd.c, built in or loaded), no module loaded by start" },
	{ "area-in-fresh-ram", PLAN_AREA, false, predict__area_in_fresh_ram,
	  "storaged area/area.c: the area's directory must exist; Linux mm/shmem.c: a new tmpfs holds only its root" },
	{ "area-overlay", PLAN_AREA, false, predict__area_overlay,
	  "Linux fs/overlayfs/super.c: get_fs_type(\"overlay\") (/proc/filesystems, else a module), and storaged area/area_overlay.c: a directory on an overlay is refused as a lower layer, 6.1-6.18" },
	{ "area-copy-helper", PLAN_AREA, false, rule_area_copy_helper,
	  "storaged copy/copy_spawn.c copy_spawn_find(), as area.c runs the copy" },
	{ "zram-compression", PLAN_AREA, false, predict__zram_compression,
	  "Linux drivers/block/zram/zram_drv.c comp_algorithm_show()/comp_algorithm_store(): the compressors built in, the current one in brackets; another name is EINVAL, 6.1-6.18" },
	{ "wait-device", PLAN_WAIT_DEVICE, false, rule_wait_device,
	  "storaged exec/exec_wait.c: an absent device fails at its device timeout (x-systemd.device-timeout=, systemd.mount(5))" },
	{ "fstype", PLAN_MOUNT, false, predict__fstype,
	  "Linux fs/filesystems.c get_fs_type(): /proc/filesystems, else request_module(\"fs-TYPE\") (modules.alias), 6.1-6.18; util-linux libmount/src/context_mount.c prepare_helper(): mount.TYPE in FS_SEARCH_PATH, 2.38-2.41" },
	{ "overlay-layers", PLAN_MOUNT, false, rule_overlay_layers,
	  "Linux fs/overlayfs/params.c ovl_fs_params_verify(): \"missing 'lowerdir'\", \"missing 'workdir'\" (EINVAL), 6.5-6.18; fs/overlayfs/super.c ovl_fill_super() before 6.5" },
	{ "tmpfs-numbers", PLAN_MOUNT, false, rule_tmpfs_numbers,
	  "Linux mm/shmem.c shmem_parse_one() with lib/cmdline.c memparse(): size=, nr_blocks=, nr_inodes= (EINVAL \"Bad value\"), 5.4-6.18" },
	{ "degraded-btrfs-only", PLAN_MOUNT, false, rule_degraded,
	  "Linux fs/fs_context.c vfs_parse_fs_param(): a parameter no filesystem takes is EINVAL \"Unknown parameter\"; only fs/btrfs/super.c takes degraded, 5.1-6.18" },
	{ "id-names", PLAN_MOUNT, true, rule_id_names,
	  "util-linux libmount/src/context_mount.c fix_optstr(): uid= and gid= names through getpwnam_r(3)/getgrnam_r(3), a name in neither fails the mount (MNT_ERR_MOUNTOPT), 2.38-2.41" },
	{ "tmpfs-options", PLAN_MOUNT, false, rule_tmpfs_options,
	  "Linux mm/shmem.c shmem_fs_parameters[], fs/fs_context.c vfs_parse_fs_param(): \"Unknown parameter\" (EINVAL), 5.4-6.18; util-linux libmount mnt_split_optstr(), 2.38-2.41" },
	{ "btrfs-members", PLAN_MOUNT, false, rule_btrfs_members,
	  "Linux fs/btrfs/volumes.c read_one_chunk()/read_one_dev(): a missing devid is refused without -o degraded (ENOENT, \"failed to read chunk tree\"), 6.1-6.18" },
	{ "mount-point", PLAN_MOUNT, true, predict__mount_point,
	  "Linux fs/namespace.c do_mount() user_path_at() of a missing mount point (ENOENT), graft_tree() of a directory on a non-directory (ENOTDIR), 6.1-6.18; util-linux libmount/src/hook_mkdir.c (X-mount.mkdir), 2.39-2.41" },
	{ "source-exists", PLAN_MOUNT, true, predict__source,
	  "Linux fs/namespace.c do_loopback(): kern_path() of the bind source (ENOENT); util-linux libmount/src/hook_loopdev.c setup_loopdev() opens the loop image, 2.39-2.41" },
	{ "block-source", PLAN_MOUNT, true, predict__block_source,
	  "Linux fs/super.c get_tree_bdev() -> lookup_bdev(): not a block device (ENOTBLK), 6.1-6.18; util-linux libmount/src/hook_loopdev.c is_loopdev_required() (context_loopdev.c mnt_context_is_loopdev() before 2.39): loop, offset=, sizelimit=, or a regular file over 1 KiB of a type libblkid knows, 2.38-2.41" },
	{ "overlay-dirs", PLAN_MOUNT, true, predict__overlay_dirs,
	  "Linux fs/overlayfs/params.c ovl_parse_layer() -> kern_path() of each layer (ENOENT), 6.5-6.18; fs/overlayfs/super.c ovl_mount_dir() before 6.5" },
};

static int predict_step(struct predictor *pr, size_t i)
{
	const struct plan_step *s = &pr->p->steps[i];
	int r;

	if (s->done || s->later || s->conflict || s->predicted)
		return 0;
	r = predict_skip(pr, i);
	for (size_t k = 0; r == 0 && k < ARRAY_SIZE(rules); k++)
		if (rules[k].kind == s->kind && (!rules[k].system_paths || pr->ps->system_paths))
			r = rules[k].check(pr, i);
	return r;
}

int predict_plan(const struct plan_input *in, const struct predict_sources *ps, struct plan *p,
		 struct predictions *ret)
{
	struct predictor pr = { .in = in, .ps = ps, .p = p, .out = ret, .n_tops = SIZE_MAX };
	int r = 0, n = 0;

	*ret = (struct predictions){ 0 };
	for (size_t i = 0; r >= 0 && i < p->n_steps; i++) {
		r = predict_step(&pr, i);
		n += r > 0 && !plan_step_predicted_skip(&p->steps[i]);
	}
	strv_free(pr.fstypes);
	strv_free(pr.dev_types);
	strv_free(pr.zram_compressors);
	free(pr.tops);
	return r < 0 ? r : n;
}

void predictions_done(struct predictions *pp)
{
	for (size_t i = 0; i < pp->n; i++)
		free(pp->why[i]);
	free(pp->why);
	*pp = (struct predictions){ 0 };
}
