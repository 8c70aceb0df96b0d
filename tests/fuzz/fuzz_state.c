/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: the state readers over arbitrary bytes: state_parse() (the
 * run state, <dir>/state) and state_area_parse() (one area's record,
 * areas/<name>/state).  Contract checked (state.h):
 *   - state_parse() returns 0, -EBADMSG or -ENOMEM; on success every record
 *     has an id and a kind and status in range, no two records share kind
 *     and id, and last_seq is at least every record's seq; on failure the
 *     state is empty;
 *   - state_area_parse() returns 0, -EBADMSG or -ENOMEM; on success the
 *     four strings are set and the backend and resource_id are in range; on
 *     failure the record is empty;
 *   - a state or area record that was read is written and read back the
 *     same, every field (the writer escapes what inih would trim or take for a
 *     comment).
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "state/state.h"

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static void same_record(const struct state_record *a, const struct state_record *b)
{
	fuzz_assert(a->kind == b->kind && a->status == b->status && strcmp(a->id, b->id) == 0);
	fuzz_assert(same_str(a->source, b->source) && same_str(a->fstype, b->fstype));
	fuzz_assert(same_str(a->reason, b->reason) && same_str(a->mountpoint, b->mountpoint));
	fuzz_assert(a->seq == b->seq && a->duration_usec == b->duration_usec);
	fuzz_assert(a->nofail == b->nofail && a->recursive == b->recursive);
	fuzz_assert(a->mount_id == b->mount_id && a->mount_unique_id == b->mount_unique_id);
	/* written only with the root's inode number: a parsed record may hold
	 * a device or birth time alone, which is not written back */
	fuzz_assert(a->mount_root_ino == b->mount_root_ino);
	if (a->mount_root_ino)
		fuzz_assert(a->mount_root_dev == b->mount_root_dev &&
			    a->mount_root_btime_ns == b->mount_root_btime_ns);
	fuzz_assert(a->members_expected == b->members_expected);
	if (a->members_expected) {
		fuzz_assert(a->members_present == b->members_present && a->waited_usec == b->waited_usec);
		fuzz_assert(same_str(a->members_note, b->members_note));
	}
}

/* saves @s into a temporary directory and parses the file back */
static void state_round_trip(struct state *s)
{
	char dir[] = "/tmp/fuzz_state.XXXXXX", file[64], *text = NULL;
	struct state t;
	size_t len = 0;
	FILE *f;
	int r;

	if (!mkdtemp(dir))
		return;
	snprintf(file, sizeof(file), "%s/state", dir);
	if (state_save(dir, s) == 0 && (f = fopen(file, "r"))) {
		char chunk[4096];
		size_t n;
		FILE *m = open_memstream(&text, &len);

		while (m && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
			fwrite(chunk, 1, n, m);
		fclose(f);
		if (m && fclose(m) == 0) {
			r = state_parse(text, len, &t, NULL);
			fuzz_assert(r == 0 || r == -ENOMEM);
			if (r == 0) {
				fuzz_assert(t.n == s->n && t.torn_bytes == 0);
				for (size_t i = 0; i < s->n; i++)
					same_record(&s->v[i], &t.v[i]);
				state_done(&t);
			}
		}
		free(text);
	}
	unlink(file);
	rmdir(dir);
}

static void check_state(char *buf, size_t size)
{
	struct state s;
	int r = state_parse(buf, size, &s, NULL);

	fuzz_assert(r == 0 || r == -EBADMSG || r == -ENOMEM);
	if (r < 0) {
		fuzz_assert(s.n == 0 && !s.v);
		return;
	}
	for (size_t i = 0; i < s.n; i++) {
		fuzz_assert(s.v[i].id && s.v[i].id[0]);
		fuzz_assert(s.v[i].kind <= STATE_BTRFS && s.v[i].status <= STATE_SKIPPED);
		fuzz_assert(s.v[i].seq <= s.last_seq);
		for (size_t j = 0; j < i; j++)
			fuzz_assert(s.v[j].kind != s.v[i].kind || strcmp(s.v[j].id, s.v[i].id) != 0);
	}
	state_round_trip(&s);
	state_done(&s);
}

static void same_area(const struct state_area *a, const struct state_area *b)
{
	fuzz_assert(strcmp(a->name, b->name) == 0 && strcmp(a->path, b->path) == 0);
	fuzz_assert(strcmp(a->fs, b->fs) == 0 && strcmp(a->device, b->device) == 0);
	fuzz_assert(a->backend == b->backend && a->resource_id == b->resource_id);
	fuzz_assert(a->persist == b->persist && a->sync_refused == b->sync_refused);
	fuzz_assert((a->sync_dir == NULL) == (b->sync_dir == NULL));
	fuzz_assert(!a->sync_dir || strcmp(a->sync_dir, b->sync_dir) == 0);
	fuzz_assert(a->cover_id == b->cover_id && a->n_carried == b->n_carried);
	for (size_t i = 0; i < a->n_carried; i++)
		fuzz_assert(a->carried[i] == b->carried[i]);
	fuzz_assert(a->seeded == b->seeded && a->covered == b->covered);
	fuzz_assert(a->size_bytes == b->size_bytes && a->nr_inodes == b->nr_inodes);
	fuzz_assert(a->started_usec == b->started_usec);
}

/* writes @a to a temporary file and reads it back */
static void area_round_trip(const struct state_area *a)
{
	char dir[] = "/tmp/fuzz_state.XXXXXX", file[64];
	struct state_area b;
	int fd, r;

	if (!mkdtemp(dir))
		return;
	snprintf(file, sizeof(file), "%s/state", dir);
	r = state_area_write(file, a);
	fd = r == 0 ? open(file, O_RDONLY | O_CLOEXEC) : -1;
	if (fd >= 0) {
		r = state_area_read_fd(fd, &b);
		close(fd);
		fuzz_assert(r == 0 || r == -ENOMEM);
		if (r == 0)
			same_area(a, &b);
		state_area_done(&b);
	}
	unlink(file);
	rmdir(dir);
}

static void check_area(const char *buf, size_t size)
{
	struct state_area a;
	int r = state_area_parse(buf, size, &a);

	fuzz_assert(r == 0 || r == -EBADMSG || r == -ENOMEM);
	if (r < 0) {
		fuzz_assert(!a.name && !a.path && !a.fs && !a.device && a.resource_id == -1);
		return;
	}
	fuzz_assert(a.name && a.path && a.fs && a.device);
	fuzz_assert(a.backend <= AREA_BRD && a.resource_id >= -1);
	area_round_trip(&a);
	state_area_done(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	check_state(buf, size);
	check_area(buf, size);
	free(buf);
	return 0;
}
