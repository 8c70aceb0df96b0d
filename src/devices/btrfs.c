/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Multi-device btrfs: which members of which filesystem are present (pure,
 * from the superblocks and chunk trees in the inventory).  The control
 * ioctls are in btrfs_control.c.
 *
 * Steps of btrfs_group():
 *   1. collect the btrfs members of the inventory;
 *   2. sort them by (fsid, devid, newest generation first, devnode);
 *   3. for each fsid: pick the record of the filesystem's devices that
 *      decides (fs_pick_record()) and take as members the devices it names
 *      (fs_members_from_record()): a device it names twice is a clone, a
 *      device of the fsid it does not name a stranger, one of another fsid
 *      it names a seed; without a record that decides, by devid
 *      (fs_pick_members(): a devid two devices claim is a clone, neither is
 *      kept) and the missing devids from the sys_chunk_array; take label
 *      and num_devices from the newest device, and note members whose
 *      generation is behind the newest member's (stale).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "btrfs.h"
#include "shared/util.h"

/* ---------------------------------------------------------------- grouping */

static int member_cmp(const void *a, const void *b)
{
	const struct block_device *x = *(const struct block_device *const *)a;
	const struct block_device *y = *(const struct block_device *const *)b;
	int r = memcmp(x->btrfs.fsid, y->btrfs.fsid, sizeof(x->btrfs.fsid));

	if (r)
		return r;
	if (x->btrfs.devid != y->btrfs.devid)
		return x->btrfs.devid < y->btrfs.devid ? -1 : 1;
	if (x->btrfs.generation != y->btrfs.generation)
		return x->btrfs.generation > y->btrfs.generation ? -1 : 1;
	return strcmp(x->devnode ?: "", y->devnode ?: "");
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Step 3a: one member per devid; @devs is sorted by member_cmp.  A devid
 * that two devices claim has no member: which copy is the filesystem cannot
 * be told from the superblocks, and the kernel would take whichever it was
 * told about last. */
static int fs_pick_members(struct btrfs_filesystem *fs, const struct block_device **devs, size_t n,
			   struct diag_list *diags)
{
	fs->members = calloc(n, sizeof(*fs->members));
	fs->clones = calloc(n, sizeof(*fs->clones));
	if (!fs->members || !fs->clones)
		return -ENOMEM;
	for (size_t i = 0, j; i < n; i = j) {
		uint64_t devid = devs[i]->btrfs.devid;

		for (j = i + 1; j < n && devs[j]->btrfs.devid == devid; j++)
			if (devid != BTRFS_DEV_REPLACE_DEVID)
				fs->clones[fs->n_clones++] = (struct btrfs_clone){ devid, devs[i], devs[j] };
		if (devid == BTRFS_DEV_REPLACE_DEVID) /* no member: the newest is the target */
			fs->replace_target = devs[i];
		else if (j == i + 1)
			fs->members[fs->n_members++] = (struct btrfs_member){ devid, devs[i], false };
	}
	if (fs->n_clones) {
		char msg[1024];

		if (diag_warning(diags, NULL, 0, "%s", btrfs_format_clones(fs, msg, sizeof(msg))) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* A member, or a devid claimed by clones (present, but not usable). */
static bool fs_has_devid(const struct btrfs_filesystem *fs, uint64_t devid)
{
	for (size_t i = 0; i < fs->n_members; i++)
		if (fs->members[i].devid == devid)
			return true;
	for (size_t i = 0; i < fs->n_clones; i++)
		if (fs->clones[i].devid == devid)
			return true;
	return false;
}

/* The distinct devids among the clones (they come sorted by devid). */
static size_t fs_clone_devids(const struct btrfs_filesystem *fs)
{
	size_t n = 0;

	for (size_t i = 0; i < fs->n_clones; i++)
		n += i == 0 || fs->clones[i].devid != fs->clones[i - 1].devid;
	return n;
}

/* Step 3c: devids named by the system chunks of any member, not present. */
static int fs_find_missing(struct btrfs_filesystem *fs)
{
	size_t cap = 0, n = 0;

	for (size_t i = 0; i < fs->n_members; i++)
		cap += fs->members[i].dev->btrfs.n_sys_devids;
	if (cap == 0)
		return 0;
	fs->missing = calloc(cap, sizeof(*fs->missing));
	if (!fs->missing)
		return -ENOMEM;
	for (size_t i = 0; i < fs->n_members; i++) {
		const struct btrfs_sb_info *b = &fs->members[i].dev->btrfs;

		for (size_t k = 0; k < b->n_sys_devids && k < BTRFS_SB_MAX_SYS_DEVIDS; k++)
			if (!fs_has_devid(fs, b->sys_devids[k]))
				fs->missing[n++] = b->sys_devids[k];
	}
	qsort(fs->missing, n, sizeof(*fs->missing), u64_cmp);
	for (size_t i = 0; i < n; i++)
		if (fs->n_missing == 0 || fs->missing[fs->n_missing - 1] != fs->missing[i])
			fs->missing[fs->n_missing++] = fs->missing[i];
	return 0;
}

/* ------------------------------------------------- the filesystem's record */

/* @d is the device @e names: devid, dev_uuid and the fsid it carries, as
 * read_one_dev() matches a device item with a device (fs/btrfs/volumes.c). */
static bool dev_is(const struct block_device *d, const struct btrfs_sb_dev *e)
{
	return d->is_btrfs && d->btrfs.devid == e->devid &&
	       memcmp(d->btrfs.dev_uuid, e->dev_uuid, sizeof(e->dev_uuid)) == 0 &&
	       memcmp(d->btrfs.dev_fsid, e->fsid, sizeof(e->fsid)) == 0;
}

/* @rec names @d among its devices. */
static bool record_names(const struct btrfs_sb_info *rec, const struct block_device *d)
{
	for (size_t i = 0; i < rec->n_devs && i < BTRFS_SB_MAX_DEVS; i++)
		if (dev_is(d, &rec->devs[i]))
			return true;
	return false;
}

/* A record that can decide: read from the chunk tree, and naming the
 * device it was read from. */
static bool record_usable(const struct block_device *d)
{
	return d->btrfs.devs_from_tree && record_names(&d->btrfs, d);
}

/* A device item of another fsid than the filesystem's own: a seed's. */
static bool entry_is_seed(const struct btrfs_sb_info *rec, const struct btrfs_sb_dev *e)
{
	return memcmp(e->fsid, rec->meta_fsid, sizeof(e->fsid)) != 0;
}

/* How well @src's record is borne out by the present devices. */
struct record_score {
	size_t support; /* present devices it names that agree with it (endorses()) */
	size_t against; /* present devices it names that do not */
	bool complete; /* every device it names is present */
	uint64_t generation;
};

/* A device @rec names agrees with it unless its own record (read from its
 * chunk tree) leaves out the device @rec was read from: a member that saw
 * the device removed, or a device of another filesystem that carries the
 * same fsid.  A seed knows nothing of its sprouts: it agrees. */
static bool endorses(const struct block_device *d, const struct btrfs_sb_dev *e,
		     const struct block_device *src)
{
	return entry_is_seed(&src->btrfs, e) || !d->btrfs.devs_from_tree || record_names(&d->btrfs, src);
}

static struct record_score record_score(const struct block_device *src, const struct inventory *inv,
					const struct block_device **devs, size_t n)
{
	const struct btrfs_sb_info *rec = &src->btrfs;
	struct record_score sc = { .complete = true, .generation = rec->generation };

	for (size_t i = 0; i < rec->n_devs && i < BTRFS_SB_MAX_DEVS; i++) {
		const struct btrfs_sb_dev *e = &rec->devs[i];
		bool seed = entry_is_seed(rec, e), found = false;
		size_t m = seed ? inv->n_devs : n;

		for (size_t k = 0; k < m; k++) {
			const struct block_device *d = seed ? &inv->devs[k] : devs[k];

			if (!dev_is(d, e))
				continue;
			found = true;
			if (endorses(d, e, src))
				sc.support++;
			else
				sc.against++;
		}
		sc.complete = sc.complete && found;
	}
	return sc;
}

/* A record that names devices which do not name it back loses one for
 * each: a made-up record cannot win by naming the real members. */
static int64_t score_net(const struct record_score *a)
{
	return (int64_t)a->support - (int64_t)a->against;
}

static bool score_better(const struct record_score *a, const struct record_score *b)
{
	if (score_net(a) != score_net(b))
		return score_net(a) > score_net(b);
	if (a->complete != b->complete)
		return a->complete;
	return a->generation > b->generation;
}

/* Step 3a: the record that decides among the @n devices @devs of one fsid;
 * NULL when none can.  *@ret_rival: a device whose record names other
 * devices and is borne out as well (two filesystems with one fsid: which
 * is meant cannot be told), else NULL. */
static const struct block_device *fs_pick_record(const struct inventory *inv, const struct block_device **devs,
						 size_t n, const struct block_device **ret_rival)
{
	const struct block_device *best = NULL;
	struct record_score bs = { 0 };

	for (size_t i = 0; i < n; i++) {
		struct record_score sc;

		if (!record_usable(devs[i]))
			continue;
		sc = record_score(devs[i], inv, devs, n);
		if (!best || score_better(&sc, &bs)) {
			best = devs[i];
			bs = sc;
		}
	}
	for (size_t i = 0; best && i < n; i++) {
		struct record_score sc;

		if (devs[i] == best || !record_usable(devs[i]))
			continue;
		sc = record_score(devs[i], inv, devs, n);
		if (score_net(&sc) == score_net(&bs) && sc.complete == bs.complete &&
		    !(record_names(&best->btrfs, devs[i]) && record_names(&devs[i]->btrfs, best))) {
			*ret_rival = devs[i];
			break;
		}
	}
	return best;
}

/* Step 3b: two records as well borne out name different devices: no device
 * is a member (btrfs_filesystem.split). */
static int fs_split(struct btrfs_filesystem *fs, const struct block_device *a, const struct block_device *b,
		    struct diag_list *diags)
{
	char msg[1024];

	fs->members = calloc(1, sizeof(*fs->members));
	fs->clones = calloc(1, sizeof(*fs->clones));
	if (!fs->members || !fs->clones)
		return -ENOMEM;
	fs->split[0] = a;
	fs->split[1] = b;
	fs->num_devices = a->btrfs.n_devs;
	return diag_warning(diags, NULL, 0, "%s", btrfs_format_clones(fs, msg, sizeof(msg))) < 0 ? -ENOMEM : 0;
}

/* Appends the device(s) @e names to @fs: a member, a clone pair, or a
 * missing devid.  @seed: look for a seed device in the whole inventory. */
static void fs_add_entry(struct btrfs_filesystem *fs, const struct btrfs_sb_dev *e, bool seed,
			 const struct inventory *inv, const struct block_device **devs, size_t n)
{
	const struct block_device *first = NULL;
	size_t m = seed ? inv->n_devs : n, clones = fs->n_clones;

	for (size_t k = 0; k < m; k++) {
		const struct block_device *d = seed ? &inv->devs[k] : devs[k];

		if (!dev_is(d, e))
			continue;
		if (!first)
			first = d;
		else
			fs->clones[fs->n_clones++] = (struct btrfs_clone){ e->devid, first, d };
	}
	if (!first) {
		fs->missing[fs->n_missing++] = e->devid;
	} else if (fs->n_clones == clones) { /* a clone is no member: neither copy is */
		fs->members[fs->n_members++] = (struct btrfs_member){ e->devid, first, seed };
		fs->n_seeds += seed;
	}
}

/* A replace that the kernel resumes at mount (linux/btrfs.h
 * BTRFS_IOCTL_DEV_REPLACE_STATE_STARTED, _SUSPENDED). */
static bool replace_resumed(uint64_t state)
{
	return state == 1 || state == 4;
}

/* @d is the target of a replace that @rec's filesystem has in progress,
 * as the kernel takes it at mount (fs/btrfs/dev-replace.c
 * btrfs_init_dev_replace()): devid 0 among the devices of its fsid, its
 * device item of the filesystem's own fsid, and the device tree's replace
 * item (read from a member, inventory_read_btrfs_replace()) saying the
 * replace is to be resumed; where that item could not be read, written at
 * the commit of @rec or a later one (the target's superblock is written
 * with the others' at every commit while the replace runs; one left from
 * an older replace is behind). */
static bool is_replace_target(const struct btrfs_sb_info *rec, const struct block_device *d)
{
	const struct btrfs_sb_info *b = &d->btrfs;

	return b->devid == BTRFS_DEV_REPLACE_DEVID && memcmp(b->dev_fsid, rec->meta_fsid, sizeof(rec->meta_fsid)) == 0 &&
	       (b->replace_known ? replace_resumed(b->replace_state) : b->generation >= rec->generation);
}

/* The devices of @devs that @rec does not name: the replace target, then
 * strangers. */
static void fs_find_strangers(struct btrfs_filesystem *fs, const struct btrfs_sb_info *rec,
			      const struct block_device **devs, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		struct btrfs_stranger *st;

		if (record_names(rec, devs[k]))
			continue;
		if (!fs->replace_target && is_replace_target(rec, devs[k])) {
			fs->replace_target = devs[k];
			continue;
		}
		st = &fs->strangers[fs->n_strangers++];
		*st = (struct btrfs_stranger){ .dev = devs[k] };
		for (size_t i = 0; i < rec->n_devs && i < BTRFS_SB_MAX_DEVS; i++)
			if (rec->devs[i].devid == devs[k]->btrfs.devid && !entry_is_seed(rec, &rec->devs[i]))
				memcpy(st->record_uuid, rec->devs[i].dev_uuid, sizeof(st->record_uuid));
	}
}

/* Step 3c: @fs's members, clones, missing devids and strangers as @src's
 * record names them: the filesystem's own devices by devid, then its seeds. */
static int fs_members_from_record(struct btrfs_filesystem *fs, const struct block_device *src,
				  const struct inventory *inv, const struct block_device **devs, size_t n,
				  struct diag_list *diags)
{
	const struct btrfs_sb_info *rec = &src->btrfs;
	size_t cap = rec->n_devs + inv->n_devs + n;
	char msg[1024];

	fs->members = calloc(cap, sizeof(*fs->members));
	fs->clones = calloc(cap, sizeof(*fs->clones));
	fs->missing = calloc(cap, sizeof(*fs->missing));
	fs->strangers = calloc(n, sizeof(*fs->strangers));
	if (!fs->members || !fs->clones || !fs->missing || !fs->strangers)
		return -ENOMEM;
	fs->record_from = src;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < rec->n_devs && i < BTRFS_SB_MAX_DEVS; i++)
			if (entry_is_seed(rec, &rec->devs[i]) == (pass == 1))
				fs_add_entry(fs, &rec->devs[i], pass == 1, inv, devs, n);
	fs_find_strangers(fs, rec, devs, n);
	fs->num_devices = rec->n_devs;
	for (size_t i = 0; i < fs->n_strangers; i++)
		if (diag_warning(diags, NULL, 0, "%s",
				 btrfs_format_stranger(fs, &fs->strangers[i], msg, sizeof(msg))) < 0)
			return -ENOMEM;
	if (fs->n_clones && diag_warning(diags, NULL, 0, "%s", btrfs_format_clones(fs, msg, sizeof(msg))) < 0)
		return -ENOMEM;
	return 0;
}

/* Step 3, without a record that decides: by devid. */
static int fs_members_by_devid(struct btrfs_filesystem *fs, const struct block_device **devs, size_t n,
			       struct diag_list *diags)
{
	const struct btrfs_sb_info *newest = &devs[0]->btrfs;
	uint64_t accounted;
	int r;

	r = fs_pick_members(fs, devs, n, diags);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		if (devs[i]->btrfs.generation > newest->generation)
			newest = &devs[i]->btrfs;
	fs->num_devices = newest->num_devices;
	r = fs_find_missing(fs);
	if (r < 0)
		return r;
	accounted = fs->n_members + fs->n_missing + fs_clone_devids(fs);
	fs->n_unknown_missing = fs->num_devices > accounted ? fs->num_devices - accounted : 0;
	return 0;
}

/* Step 3: build @fs from the @n sorted devices @devs of one fsid. */
static int fs_build(struct btrfs_filesystem *fs, const struct inventory *inv, const struct block_device **devs,
		    size_t n, struct diag_list *diags)
{
	const struct block_device *rival = NULL, *src = fs_pick_record(inv, devs, n, &rival);
	const struct btrfs_sb_info *newest = NULL;
	int r;

	memcpy(fs->fsid, devs[0]->btrfs.fsid_str, sizeof(fs->fsid));
	fs->fsid[sizeof(fs->fsid) - 1] = '\0';
	if (rival)
		r = fs_split(fs, src, rival, diags);
	else if (src)
		r = fs_members_from_record(fs, src, inv, devs, n, diags);
	else
		r = fs_members_by_devid(fs, devs, n, diags);
	if (r < 0)
		return r;
	for (size_t i = 0; i < fs->n_members; i++) {
		const struct btrfs_sb_info *b = &fs->members[i].dev->btrfs;

		if (fs->members[i].seed)
			continue;
		if (b->generation > fs->generation)
			fs->generation = b->generation;
		if (!newest || b->generation > newest->generation)
			newest = b;
	}
	if (!newest)
		newest = &(src ? src : devs[0])->btrfs;
	if (newest->label[0] && !(fs->label = strndup(newest->label, sizeof(newest->label))))
		return -ENOMEM;
	return 0;
}

int btrfs_group(const struct inventory *inv, struct btrfs_fs_list *ret, struct diag_list *diags)
{
	struct btrfs_fs_list l = { 0 };
	const struct block_device **devs;
	size_t n = 0;
	int r = -ENOMEM;

	/* Step 1 */
	devs = calloc(inv->n_devs ?: 1, sizeof(*devs));
	if (!devs)
		return -ENOMEM;
	for (size_t i = 0; i < inv->n_devs; i++)
		if (inv->devs[i].is_btrfs)
			devs[n++] = &inv->devs[i];
	/* Step 2 */
	qsort(devs, n, sizeof(*devs), member_cmp);
	/* Step 3: at most n filesystems; runs of equal fsid */
	l.v = calloc(n ?: 1, sizeof(*l.v));
	if (!l.v)
		goto out;
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n; j++)
			if (memcmp(devs[i]->btrfs.fsid, devs[j]->btrfs.fsid, 16) != 0)
				break;
		r = fs_build(&l.v[l.n++], inv, devs + i, j - i, diags);
		if (r < 0)
			goto out;
	}
	*ret = l;
	memset(&l, 0, sizeof(l));
	r = 0;
out:
	btrfs_fs_list_done(&l);
	free(devs);
	return r;
}

const struct btrfs_filesystem *btrfs_fs_list_find(const struct btrfs_fs_list *l, const char *fsid)
{
	for (size_t i = 0; l && fsid && i < l->n; i++)
		if (strcasecmp(l->v[i].fsid, fsid) == 0)
			return &l->v[i];
	return NULL;
}

bool btrfs_fs_ambiguous(const struct btrfs_filesystem *fs)
{
	return fs->n_clones || fs->split[0];
}

bool btrfs_filesystem_complete(const struct btrfs_filesystem *fs)
{
	return fs->n_missing == 0 && fs->n_unknown_missing == 0 && !btrfs_fs_ambiguous(fs);
}

/* Append to @buf of @len at *@pos, never past its end. */
_printf_(4, 5) static void buf_append(char *buf, size_t len, size_t *pos, const char *fmt, ...);

static void buf_append(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*pos >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *pos, len - *pos, fmt, ap);
	va_end(ap);
	if (n > 0)
		*pos = *pos + (size_t)n < len ? *pos + (size_t)n : len;
}

/*
 * "devid 2 missing", "devids 2, 3 missing", "1 member missing",
 * "2 members missing", "devid 2 and 1 other member missing",
 * "devids 2, 3 and 2 other members missing".
 */
char *btrfs_format_missing(const struct btrfs_filesystem *fs, char *buf, size_t len)
{
	uint64_t u = fs->n_unknown_missing;
	size_t pos = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	if (fs->n_missing)
		buf_append(buf, len, &pos, "devid%s ", fs->n_missing > 1 ? "s" : "");
	for (size_t i = 0; i < fs->n_missing; i++)
		buf_append(buf, len, &pos, "%s%" PRIu64, i ? ", " : "", fs->missing[i]);
	if (fs->n_missing && u)
		buf_append(buf, len, &pos, " and %" PRIu64 " other member%s missing", u, u > 1 ? "s" : "");
	else if (u)
		buf_append(buf, len, &pos, "%" PRIu64 " member%s missing", u, u > 1 ? "s" : "");
	else if (fs->n_missing)
		buf_append(buf, len, &pos, " missing");
	return buf;
}

/* A seed is read-only and keeps its own generation: never stale. */
bool btrfs_member_stale(const struct btrfs_filesystem *fs, const struct btrfs_member *m)
{
	return !m->seed && m->dev->btrfs.generation < fs->generation;
}

const struct btrfs_member *btrfs_first_stale(const struct btrfs_filesystem *fs)
{
	for (size_t i = 0; i < fs->n_members; i++)
		if (btrfs_member_stale(fs, &fs->members[i]))
			return &fs->members[i];
	return NULL;
}

unsigned btrfs_fs_problems(const struct btrfs_filesystem *fs)
{
	unsigned p = 0;

	if (fs->n_members < fs->num_devices || fs->n_missing || fs->n_unknown_missing)
		p |= BTRFS_FS_INCOMPLETE;
	if (btrfs_first_stale(fs))
		p |= BTRFS_FS_STALE;
	if (btrfs_fs_ambiguous(fs))
		p |= BTRFS_FS_AMBIGUOUS;
	return p;
}

char *btrfs_format_clones(const struct btrfs_filesystem *fs, char *buf, size_t len)
{
	size_t pos = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	if (fs->split[0]) {
		snprintf(buf, len, "btrfs %s: two sets of devices carry its fsid, each a whole filesystem by its own record ('%s', devid %" PRIu64 ", generation %" PRIu64 ", and '%s', devid %" PRIu64 ", generation %" PRIu64 "): which one is meant cannot be told (a filesystem made with the same fsid?); storaged registers none of them and does not mount this filesystem: detach the devices that do not belong, or give them a new fsid (btrfstune -u)",
			 fs->fsid, fs->split[0]->devnode, fs->split[0]->btrfs.devid, fs->split[0]->btrfs.generation,
			 fs->split[1]->devnode, fs->split[1]->btrfs.devid, fs->split[1]->btrfs.generation);
		return buf;
	}
	if (!fs->n_clones)
		return buf;
	buf_append(buf, len, &pos, "btrfs %s: ", fs->fsid);
	for (size_t i = 0; i < fs->n_clones; i++) {
		const struct btrfs_clone *c = &fs->clones[i];

		buf_append(buf, len, &pos,
			   "%s'%s' and '%s' both claim devid %" PRIu64 " (generations %" PRIu64
			   " and %" PRIu64 ")",
			   i ? "; " : "", c->a->devnode, c->b->devnode, c->devid,
			   c->a->btrfs.generation, c->b->btrfs.generation);
	}
	buf_append(buf, len, &pos,
		   ": a cloned disk? storaged registers neither and does not mount this filesystem: detach the copy that does not belong, or give it a new fsid (btrfstune -u)");
	return buf;
}

static void uuid_str(const uint8_t u[16], char out[37])
{
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		 u[13], u[14], u[15]);
}

char *btrfs_format_stranger(const struct btrfs_filesystem *fs, const struct btrfs_stranger *st, char *buf,
			    size_t len)
{
	static const uint8_t zero[16];
	const struct btrfs_sb_info *b = &st->dev->btrfs;
	char claims[37], named[37], devids[256] = "";
	size_t pos = 0;

	if (!len)
		return buf;
	uuid_str(b->dev_uuid, claims);
	uuid_str(st->record_uuid, named);
	for (size_t i = 0; i < fs->n_members; i++)
		buf_append(devids, sizeof(devids), &pos, "%s%" PRIu64, i ? ", " : "", fs->members[i].devid);
	for (size_t i = 0; i < fs->n_missing; i++)
		buf_append(devids, sizeof(devids), &pos, "%s%" PRIu64, pos ? ", " : "", fs->missing[i]);
	if (memcmp(st->record_uuid, zero, sizeof(zero)) != 0)
		snprintf(buf, len, "btrfs %s: '%s' carries its fsid and claims devid %" PRIu64 " (dev_uuid %s, generation %" PRIu64 "), but the filesystem's own record names devid %" PRIu64 " as dev_uuid %s: not one of its devices (removed from it, its devid given to a device added since, or of another filesystem made with the same fsid?); storaged ignores it: detach it, wipe it (wipefs) if it was removed, or give it a new fsid (btrfstune -u)",
			 fs->fsid, st->dev->devnode, b->devid, claims, b->generation, b->devid, named);
	else
		snprintf(buf, len, "btrfs %s: '%s' carries its fsid and claims devid %" PRIu64 " (dev_uuid %s, generation %" PRIu64 "), but the filesystem's own record has no devid %" PRIu64 " (its devices: devid%s %s): not one of its devices (removed from it, or of another filesystem made with the same fsid?); storaged ignores it: detach it, or wipe it (wipefs) if it was removed",
			 fs->fsid, st->dev->devnode, b->devid, claims, b->generation, b->devid,
			 fs->n_members + fs->n_missing > 1 ? "s" : "", devids);
	return buf;
}

char *btrfs_format_states(const struct btrfs_filesystem *fs, char *buf, size_t len)
{
	size_t pos = 0, n = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < fs->n_members; i++)
		if (fs->members[i].seed)
			buf_append(buf, len, &pos, "%sdevid %" PRIu64 " ('%s') is its seed (btrfs %s)", n++ ? "; " : "",
				   fs->members[i].devid, fs->members[i].dev->devnode,
				   fs->members[i].dev->btrfs.fsid_str);
	if (fs->replace_target && fs->replace_target->btrfs.replace_known)
		buf_append(buf, len, &pos, "%s'%s' is the target of a `btrfs replace` of devid %" PRIu64 " in progress (devid 0 until it ends): the kernel resumes the replace at mount; `btrfs replace status` on the mount point shows how far it is",
			   n++ ? "; " : "", fs->replace_target->devnode, fs->replace_target->btrfs.replace_src_devid);
	else if (fs->replace_target)
		buf_append(buf, len, &pos, "%s'%s' is the target of a `btrfs replace` in progress (devid 0 until it ends): the kernel resumes the replace at mount; `btrfs replace status` on the mount point shows how far it is",
			   n++ ? "; " : "", fs->replace_target->devnode);
	for (size_t i = 0; i < fs->n_strangers; i++)
		buf_append(buf, len, &pos, "%s'%s' carries its fsid but is not one of its devices (claims devid %" PRIu64 ")",
			   n++ ? "; " : "", fs->strangers[i].dev->devnode, fs->strangers[i].dev->btrfs.devid);
	return buf;
}

char *btrfs_format_stale(const struct btrfs_filesystem *fs, char *buf, size_t len)
{
	size_t pos = 0, n = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < fs->n_members; i++) {
		const struct btrfs_member *m = &fs->members[i];

		if (!btrfs_member_stale(fs, m))
			continue;
		buf_append(buf, len, &pos,
			   "%sdevid %" PRIu64 " ('%s') is stale: generation %" PRIu64
			   " against %" PRIu64 " of the others",
			   n++ ? "; " : "", m->devid, m->dev->devnode, m->dev->btrfs.generation,
			   fs->generation);
	}
	if (n)
		buf_append(buf, len, &pos, "; it was away while the filesystem was written to");
	return buf;
}

char *btrfs_stale_advice(const char *mountpoint, unsigned how, const char *self, char *buf, size_t len)
{
	char q[PATH_MAX * 4 + 3];

	if ((how & STALE_SCRUB_STARTED) && mountpoint)
		snprintf(buf, len, "storaged started a scrub of it (stale-member = scrub): `btrfs scrub status %s` shows how far it got",
			 shell_quote(mountpoint, q, sizeof(q)));
	else if ((how & STALE_MEMBER_UNUSED) && mountpoint)
		snprintf(buf, len, "the mounted filesystem does not use it (it came back while mounted degraded), so no scrub reaches it: run `umount %s && %s start`, then `btrfs scrub start %s`",
			 shell_quote(mountpoint, q, sizeof(q)), self ? self : "storaged", q);
	else if ((how & STALE_MOUNTED_RO) && mountpoint)
		snprintf(buf, len, "only a scrub rewrites what it missed, and none can on a read-only mount: run `mount -o remount,rw %s`, then `btrfs scrub start %s`",
			 shell_quote(mountpoint, q, sizeof(q)), q);
	else if (mountpoint)
		snprintf(buf, len, "only a scrub rewrites what it missed: run `btrfs scrub start %s`",
			 shell_quote(mountpoint, q, sizeof(q)));
	else
		snprintf(buf, len, "only a scrub rewrites what it missed: mount the filesystem, then run `btrfs scrub start` on its mount point");
	return buf;
}

void btrfs_fs_list_done(struct btrfs_fs_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].label);
		free(l->v[i].members);
		free(l->v[i].missing);
		free(l->v[i].clones);
		free(l->v[i].strangers);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}
