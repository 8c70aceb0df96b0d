/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "shared/diag.h"
#include "shared/invocation.h"
#include "shared/util.h"

static void test_strv_basics(void **state)
{
	_cleanup_strv_free_ char **v = NULL;
	char *owned;

	assert_int_equal(strv_length(NULL), 0);
	assert_false(strv_contains(NULL, "a"));

	assert_int_equal(strv_extend(&v, "x-storaged"), 0);
	assert_int_equal(strv_extend(&v, "_netdev"), 0);
	owned = strdup("nofail");
	assert_non_null(owned);
	assert_int_equal(strv_push(&v, owned), 0);

	assert_int_equal(strv_length(v), 3);
	assert_string_equal(v[0], "x-storaged");
	assert_string_equal(v[1], "_netdev");
	assert_ptr_equal(v[2], owned);
	assert_null(v[3]);

	assert_true(strv_contains(v, "_netdev"));
	assert_false(strv_contains(v, "_net"));
	assert_false(strv_contains(v, "x-storaged.requires"));
}

static void test_strv_free(void **state)
{
	char **v = NULL;

	assert_null(strv_free(NULL));
	assert_int_equal(strv_extend(&v, "a"), 0);
	v = strv_free(v);
	assert_null(v);
	strv_freep(&v); /* NULL is fine */
	assert_null(v);
}

static void test_path_is_below(void **state)
{
	assert_true(path_is_below("/srv/data/x", "/srv/data"));
	assert_true(path_is_below("/srv/data/x/y", "/srv/data"));
	assert_false(path_is_below("/srv/data2", "/srv/data"));
	assert_false(path_is_below("/srv/data", "/srv/data"));
	assert_false(path_is_below("/srv", "/srv/data"));
	assert_false(path_is_below("/other", "/srv"));
	assert_true(path_is_below("/srv", "/"));
	assert_false(path_is_below("/", "/"));
}

static void test_path_is_normalized(void **state)
{
	assert_true(path_is_normalized("/"));
	assert_true(path_is_normalized("/root/rpmbuild"));
	assert_true(path_is_normalized("/a/.hidden/..x/x.."));
	assert_false(path_is_normalized(""));
	assert_false(path_is_normalized("root/rpmbuild"));
	assert_false(path_is_normalized("/root/"));
	assert_false(path_is_normalized("//root"));
	assert_false(path_is_normalized("/root//x"));
	assert_false(path_is_normalized("/root/./x"));
	assert_false(path_is_normalized("/root/../x"));
	assert_false(path_is_normalized("/root/.."));
	assert_false(path_is_normalized("/."));
}

static void test_diag_add_count(void **state)
{
	struct diag_list dl = { 0 };

	assert_int_equal(diag_error(&dl, "a.conf", 3, "'%s' is bad", "soon"), 0);
	assert_int_equal(diag_warning(&dl, NULL, 0, "careful"), 0);
	assert_int_equal(diag_error(&dl, "b.conf", 0, "whole file"), 0);

	assert_int_equal(dl.n, 3);
	assert_int_equal(diag_count(&dl, DIAG_ERROR), 2);
	assert_int_equal(diag_count(&dl, DIAG_WARNING), 1);
	assert_string_equal(dl.v[0].file, "a.conf");
	assert_int_equal(dl.v[0].line, 3);
	assert_string_equal(dl.v[0].msg, "'soon' is bad");
	assert_null(dl.v[1].file);
	assert_int_equal(dl.v[1].level, DIAG_WARNING);

	diag_list_done(&dl);
	assert_int_equal(dl.n, 0);
	assert_null(dl.v);
	/* reusable after done */
	assert_int_equal(diag_error(&dl, "c", 1, "again"), 0);
	assert_int_equal(diag_count(&dl, DIAG_ERROR), 1);
	diag_list_done(&dl);
	diag_list_done(&dl);
}

static void test_diag_print(void **state)
{
	struct diag_list dl = { 0 };
	char *text = NULL;
	size_t size = 0;
	FILE *f;

	assert_int_equal(diag_error(&dl, "a.conf", 3, "bad value"), 0);
	assert_int_equal(diag_error(&dl, "b.conf", 0, "not root-owned"), 0);
	assert_int_equal(diag_warning(&dl, NULL, 0, "no file"), 0);

	f = open_memstream(&text, &size);
	assert_non_null(f);
	diag_print(&dl, f);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(text, "a.conf:3: error: bad value\n"
				  "b.conf: error: not root-owned\n"
				  "storaged: warning: no file\n");
	free(text);
	diag_list_done(&dl);
}

/* The cleanup idiom: a descriptor closed once at scope exit, errno kept,
 * nothing done for a negative one, and none closed once taken. */
static int open_devnull(void)
{
	_cleanup_close_ int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	return TAKE_FD(fd);
}

static void test_shell_quote(void **state)
{
	char b[64], small[8];

	(void)state;
	assert_string_equal(shell_quote("/srv/data-1", b, sizeof(b)), "/srv/data-1");
	assert_string_equal(shell_quote("/srv/my data", b, sizeof(b)), "'/srv/my data'");
	assert_string_equal(shell_quote("/srv/it's", b, sizeof(b)), "'/srv/it'\\''s'");
	assert_string_equal(shell_quote("/a;rm -rf /", b, sizeof(b)), "'/a;rm -rf /'");
	assert_string_equal(shell_quote("$(x)", b, sizeof(b)), "'$(x)'");
	assert_string_equal(shell_quote("", b, sizeof(b)), "''");
	/* cut, still closed */
	assert_string_equal(shell_quote("/a b c d e f", small, sizeof(small)), "'/a b '");
	assert_string_equal(shell_quote("'x", small, sizeof(small)), "''\\''x'");
	assert_string_equal(shell_quote("'''", small, sizeof(small)), "''\\'''");
}

static void test_cleanup_close(void **state)
{
	int kept = open_devnull();

	assert_true(fcntl(kept, F_GETFD) >= 0); /* taken: not closed */
	{
		_cleanup_close_ int fd = kept;
	}
	assert_true(fcntl(kept, F_GETFD) < 0 && errno == EBADF); /* closed at scope exit */
	errno = ENOSPC;
	assert_int_equal(safe_close(-1), -EBADF);
	assert_int_equal(safe_close(open_devnull()), -EBADF);
	assert_int_equal(errno, ENOSPC);
	{
		_cleanup_close_ int none = -EBADF;
	}
	assert_int_equal(errno, ENOSPC);
}

/* The command advice names: only the options given, absolute, quoted. */
static void test_invocation_format(void **state)
{
	char *s, *cwd;

	(void)state;
	s = invocation_format(NULL, NULL, NULL);
	assert_string_equal(s, "storaged");
	free(s);
	s = invocation_format("/etc/s.conf", NULL, "/run/sd2");
	assert_string_equal(s, "storaged -c /etc/s.conf --state-dir /run/sd2");
	free(s);
	s = invocation_format("/etc/it's mine.conf", "/etc/fs tab", NULL);
	assert_string_equal(s, "storaged -c '/etc/it'\\''s mine.conf' -f '/etc/fs tab'");
	free(s);
	/* relative: after the working directory, as it was when run */
	cwd = getcwd(NULL, 0);
	assert_non_null(cwd);
	assert_int_equal(chdir("/tmp"), 0);
	s = invocation_format(NULL, "rel/fstab", NULL);
	assert_int_equal(chdir(cwd), 0);
	assert_string_equal(s, "storaged -f /tmp/rel/fstab");
	free(s);
	free(cwd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strv_basics),    cmocka_unit_test(test_strv_free),
		cmocka_unit_test(test_path_is_below),  cmocka_unit_test(test_path_is_normalized),
		cmocka_unit_test(test_diag_add_count), cmocka_unit_test(test_diag_print),
		cmocka_unit_test(test_cleanup_close),  cmocka_unit_test(test_shell_quote),
		cmocka_unit_test(test_invocation_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
