/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The logger: "<N>" priority prefixes only when stderr is the journal's
 * stream ($JOURNAL_STREAM, systemd.exec(5)), and one line per message.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "shared/log.h"

static void test_stream_match(void **state)
{
	struct stat st = { .st_dev = 2049, .st_ino = 123456 };

	(void)state;
	assert_true(log_stream_is_journal("2049:123456", &st));
	assert_false(log_stream_is_journal(NULL, &st));
	assert_false(log_stream_is_journal("", &st));
	assert_false(log_stream_is_journal("2049:123457", &st));
	assert_false(log_stream_is_journal("2048:123456", &st));
	assert_false(log_stream_is_journal("2049", &st));
	assert_false(log_stream_is_journal(":123456", &st));
	assert_false(log_stream_is_journal("2049:", &st));
	assert_false(log_stream_is_journal("2049:123456x", &st));
	assert_false(log_stream_is_journal("-2049:123456", &st));
	assert_false(log_stream_is_journal(" 2049:123456", &st));
	assert_false(log_stream_is_journal("2049:123456:1", &st));
	assert_false(log_stream_is_journal("99999999999999999999999:1", &st));
}

/* Runs log_init() and logs with stderr on a temporary file; @env_match:
 * JOURNAL_STREAM names that file (else another inode, or is unset when
 * @env_unset).  Returns what was written (static buffer). */
static const char *capture(bool env_match, bool env_unset, int level)
{
	static char out[4096];
	char tmpl[] = "/tmp/test_log.XXXXXX", env[64];
	struct logger lg;
	struct stat st;
	int fd, saved;
	ssize_t n;

	fd = mkstemp(tmpl);
	assert_true(fd >= 0);
	unlink(tmpl);
	assert_int_equal(fstat(fd, &st), 0);
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino + (env_match ? 0 : 1));
	if (env_unset)
		unsetenv("JOURNAL_STREAM");
	else
		setenv("JOURNAL_STREAM", env, 1);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fd, STDERR_FILENO) >= 0);
	log_init(&lg, level, LOG_TARGET_STDERR);
	log_error(&lg, "cannot mount '%s'", "/srv/a\nb");
	/* UTF-8 stays; a Latin-1 byte and bytes never UTF-8 are escaped */
	log_error(&lg, "not synced: '%s'", "caf\xc3\xa9/caf\xe9/bad\xff\xfe/cut\xc3");
	log_warning(&lg, "degraded");
	log_usage_error(&lg, "status", "-o '%s': no such column", "SIZE");
	log_usage_error(&lg, NULL, "unknown command '%s'", "stats");
	log_info(&lg, "%u step(s) done", 3u);
	log_debug(&lg, "registered");
	log_close(&lg);
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	unsetenv("JOURNAL_STREAM");
	n = pread(fd, out, sizeof(out) - 1, 0);
	assert_true(n >= 0);
	out[n] = '\0';
	close(fd);
	return out;
}

static void test_prefix_on_journal(void **state)
{
	(void)state;
	assert_string_equal(capture(true, false, LOG_DEBUG), "<3>cannot mount '/srv/a\\012b'\n"
							     "<3>not synced: 'caf\xc3\xa9/caf\\351/bad\\377\\376/cut\\303'\n"
							     "<4>degraded\n"
							     "<3>status: -o 'SIZE': no such column\n"
							     "<3>unknown command 'stats'\n"
							     "<6>3 step(s) done\n"
							     "<7>registered\n");
	/* the level still filters */
	assert_string_equal(capture(true, false, LOG_ERR),
			    "<3>cannot mount '/srv/a\\012b'\n"
			    "<3>not synced: 'caf\xc3\xa9/caf\\351/bad\\377\\376/cut\\303'\n"
			    "<3>status: -o 'SIZE': no such column\n"
			    "<3>unknown command 'stats'\n");
}

static void test_no_prefix_elsewhere(void **state)
{
	static const char plain[] = "storaged: error: cannot mount '/srv/a\\012b'\n"
				    "storaged: error: not synced: 'caf\xc3\xa9/caf\\351/bad\\377\\376/cut\\303'\n"
				    "storaged: warning: degraded\n"
				    "storaged: error: status: -o 'SIZE': no such column\n"
				    "storaged: error: unknown command 'stats'\n"
				    "storaged: 3 step(s) done\n";

	(void)state;
	/* stderr redirected away from the journal (a child's, a pipe) */
	assert_string_equal(capture(false, false, LOG_INFO), plain);
	/* not under systemd at all */
	assert_string_equal(capture(false, true, LOG_INFO), plain);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_match),
		cmocka_unit_test(test_prefix_on_journal),
		cmocka_unit_test(test_no_prefix_elsewhere),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
