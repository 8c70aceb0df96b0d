/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sync back's room (copy_budget.c): what an entry costs, the limits
 * of users and root, quotas, and charges from several threads. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "copy/copy.h"
#include "copy/copy_budget.h"

#define BS 1024

/* a budget on /tmp's filesystem, with the room set to @users and @root
 * bytes and blocks of BS bytes */
static void budget_at(struct copy_budget *b, int *fd, uint64_t users, uint64_t root)
{
	*fd = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(*fd >= 0);
	assert_int_equal(copy_budget_init(b, *fd), 0);
	b->bsize = BS;
	b->free_users = users;
	b->free_root = root;
}

static void budget_end(struct copy_budget *b, int fd)
{
	copy_budget_done(b);
	close(fd);
}

/* the message of a copy that failed with @err, once the budget explained it */
static const char *explained(const struct copy_budget *b, int err)
{
	static struct copy_result r;

	r = (struct copy_result){ .err = err, .msg = "the bare errno" };
	copy_budget_explain(b, &r);
	return r.msg;
}

static struct stat file_of(uid_t uid, off_t size, blkcnt_t blocks)
{
	return (struct stat){ .st_mode = S_IFREG | 0644, .st_uid = uid, .st_size = size, .st_blocks = blocks };
}

static void test_cost(void **state)
{
	struct copy_budget b;
	struct stat st;
	int fd;

	(void)state;
	budget_at(&b, &fd, 100 * BS, 200 * BS);
	st = file_of(1000, 1, 8);
	assert_int_equal(copy_budget_charge(&b, &st), 0);
	assert_int_equal(b.used, BS); /* one byte: a block */
	st = file_of(1000, 20 * BS, 2); /* sparse: what it holds */
	assert_int_equal(copy_budget_charge(&b, &st), 0);
	assert_int_equal(b.used, 2 * BS);
	st = file_of(1000, 0, 0);
	assert_int_equal(copy_budget_charge(&b, &st), 0);
	assert_int_equal(b.used, 2 * BS);
	st = (struct stat){ .st_mode = S_IFDIR | 0755, .st_uid = 1000 };
	assert_int_equal(copy_budget_charge(&b, &st), 0);
	assert_int_equal(b.used, 3 * BS);
	st = (struct stat){ .st_mode = S_IFLNK | 0777, .st_uid = 1000, .st_size = 59 };
	assert_int_equal(copy_budget_charge(&b, &st), 0);
	assert_int_equal(b.used, 3 * BS); /* in the inode */
	st.st_size = 60;
	assert_int_equal(copy_budget_charge(&b, &st), 0);
	assert_int_equal(b.used, 4 * BS);
	st = (struct stat){ .st_mode = S_IFIFO | 0600, .st_uid = 1000 };
	for (int i = 6; i < 63; i++) /* names 7..63 are free, the 64th costs a block */
		assert_int_equal(copy_budget_charge(&b, &st), 0);
	assert_int_equal(b.used, 4 * BS);
	assert_int_equal(copy_budget_charge(&b, &st), 0);
	assert_int_equal(b.used, 5 * BS);
	assert_string_equal(explained(&b, -ENOSPC), "the bare errno"); /* no refusal */
	budget_end(&b, fd);
}

static void test_reserve(void **state)
{
	struct copy_budget b;
	struct stat st;
	int fd;

	(void)state;
	budget_at(&b, &fd, 10 * BS, 12 * BS);
	st = file_of(1000, 10 * BS, 20);
	assert_int_equal(copy_budget_charge(&b, &st), 0); /* exactly the room */
	st = file_of(1001, 1, 2);
	assert_int_equal(copy_budget_charge(&b, &st), -ENOSPC);
	assert_non_null(strstr(explained(&b, -ENOSPC), COPY_NO_ROOM ": they need at least 11264 bytes, the directory's filesystem has 10240 bytes free for uid 1001"));
	/* refused: not charged; root may use the reserve */
	assert_int_equal(b.used, 10 * BS);
	st = file_of(0, 2 * BS, 4);
	assert_int_equal(copy_budget_charge(&b, &st), 0);
	st = file_of(0, 1, 2);
	assert_int_equal(copy_budget_charge(&b, &st), -ENOSPC);
	/* the first refusal is the one told */
	assert_non_null(strstr(explained(&b, -ENOSPC), "uid 1001"));
	/* a copy that failed first of something else says that */
	assert_string_equal(explained(&b, -EIO), "the bare errno");
	assert_int_equal(copy_budget_charge(NULL, &st), 0); /* no budget: no limit */
	budget_end(&b, fd);
}

/* each inode written takes one of the filesystem's free inodes: running
 * out of them said as such, not as bytes ("No space left on device") */
static void test_inodes(void **state)
{
	struct copy_budget b;
	struct stat st = file_of(1000, 1, 2);
	int fd;

	(void)state;
	budget_at(&b, &fd, 100 * BS, 100 * BS);
	b.inodes_users = 2;
	b.inodes_root = 3;
	assert_int_equal(copy_budget_charge(&b, &st), 0);
	assert_int_equal(copy_budget_charge(&b, &st), 0);
	assert_int_equal(copy_budget_charge(&b, &st), -ENOSPC);
	assert_non_null(strstr(explained(&b, -ENOSPC), COPY_NO_ROOM ": they need at least 3 inodes, the directory's filesystem has 2 inodes free for uid 1000"));
	st = file_of(0, 1, 2);
	assert_int_equal(copy_budget_charge(&b, &st), 0); /* root may take the last */
	assert_int_equal(copy_budget_charge(&b, &st), -ENOSPC);
	budget_end(&b, fd);
	/* btrfs makes inodes as needed (f_files 0): no inode limit */
	budget_at(&b, &fd, 100 * BS, 100 * BS);
	b.inodes_users = b.inodes_root = UINT64_MAX;
	for (int i = 0; i < 50; i++)
		assert_int_equal(copy_budget_charge(&b, &st), 0);
	budget_end(&b, fd);
}

/* @b with its one owner @o, as if its quota were read from the kernel */
static void one_owner(struct copy_budget *b, struct budget_owner o)
{
	b->owners = calloc(1, sizeof(*b->owners));
	assert_non_null(b->owners);
	b->owners[0] = o;
	b->nowners = b->ownercap = 1;
}

static void test_quota(void **state)
{
	struct copy_budget b;
	struct stat st;
	int fd;

	(void)state;
	budget_at(&b, &fd, 100 * BS, 100 * BS);
	/* uid 1000 with 3 blocks of quota left */
	one_owner(&b, (struct budget_owner){ .uid = 1000, .limited = true, .room = 3 * BS });
	st = file_of(1000, 2 * BS, 4);
	assert_int_equal(copy_budget_charge(&b, &st), 0);
	assert_int_equal(copy_budget_charge(&b, &st), -EDQUOT);
	assert_string_equal(explained(&b, -EDQUOT),
			    COPY_NO_ROOM ": those of uid 1000 need at least 4096 bytes, its disk quota leaves it 3072 bytes");
	st.st_uid = 1001; /* another owner's room is its own */
	assert_int_equal(copy_budget_charge(&b, &st), 0);
	budget_end(&b, fd);
}

/* the owner's inode quota counts each inode written, whatever its size */
static void test_inode_quota(void **state)
{
	struct copy_budget b;
	struct stat st;
	int fd;

	(void)state;
	budget_at(&b, &fd, 100 * BS, 100 * BS);
	/* uid 1000 with 2 inodes of quota left and no block limit */
	one_owner(&b, (struct budget_owner){ .uid = 1000, .ilimited = true, .iroom = 2 });
	st = file_of(1000, 0, 0);
	assert_int_equal(copy_budget_charge(&b, &st), 0);
	assert_int_equal(copy_budget_charge(&b, &st), 0);
	assert_int_equal(copy_budget_charge(&b, &st), -EDQUOT);
	assert_string_equal(explained(&b, -EDQUOT),
			    COPY_NO_ROOM ": those of uid 1000 need at least 3 inodes, its disk quota leaves it 2 inodes");
	budget_end(&b, fd);
}

static void test_quota_room(void **state)
{
	uint64_t room;

	(void)state;
	assert_false(copy_budget_quota_room(0, 0, 5000, 0, 100, &room));
	assert_true(room == UINT64_MAX);
	assert_true(copy_budget_quota_room(4096, 0, 1000, 0, 100, &room));
	assert_int_equal(room, 3096);
	assert_true(copy_budget_quota_room(4096, 0, 5000, 0, 100, &room));
	assert_int_equal(room, 0);
	/* over the soft limit: up to the hard one while the grace lasts */
	assert_true(copy_budget_quota_room(8192, 2048, 3000, 200, 100, &room));
	assert_int_equal(room, 5192);
	assert_true(copy_budget_quota_room(8192, 2048, 3000, 200, 200, &room));
	assert_int_equal(room, 0);
	/* a soft limit alone, not yet over it: no limit yet */
	assert_false(copy_budget_quota_room(0, 2048, 1000, 0, 100, &room));
}

struct charger {
	struct copy_budget *b;
	int ok;
};

static void *charge_many(void *arg)
{
	struct charger *c = arg;
	struct stat st = file_of(1000, BS, 2);

	for (int i = 0; i < 1000; i++)
		c->ok += copy_budget_charge(c->b, &st) == 0;
	return NULL;
}

/* four threads charging at once: exactly the room is given */
static void test_threads(void **state)
{
	struct copy_budget b;
	struct charger c[4];
	pthread_t th[4];
	int fd, total = 0;

	(void)state;
	budget_at(&b, &fd, 3000 * BS, 3000 * BS);
	for (int i = 0; i < 4; i++) {
		c[i] = (struct charger){ .b = &b };
		assert_int_equal(pthread_create(&th[i], NULL, charge_many, &c[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		total += c[i].ok;
	}
	/* a block each, and one more for every 64th name: 2954 + 46 */
	assert_int_equal(total, 2954);
	assert_int_equal(b.used, 3000 * BS);
	budget_end(&b, fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cost),
		cmocka_unit_test(test_reserve),
		cmocka_unit_test(test_inodes),
		cmocka_unit_test(test_quota),
		cmocka_unit_test(test_inode_quota),
		cmocka_unit_test(test_quota_room),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
