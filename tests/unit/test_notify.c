/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The service manager's notifications (shared/notify.c): the
 * EXTEND_TIMEOUT_USEC= message, when an extension is due and how far it
 * reaches, and the datagram as a listener on $NOTIFY_SOCKET receives it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "shared/notify.h"

#define SEC USEC_PER_SEC

static void test_format(void **unused)
{
	char buf[64], tiny[8];

	assert_int_equal(notify_format_extend(buf, sizeof(buf), 38 * SEC), 28);
	assert_string_equal(buf, "EXTEND_TIMEOUT_USEC=38000000");
	assert_int_equal(notify_format_extend(tiny, sizeof(tiny), 1), -ENOBUFS);
}

/* A wait of 5 s: the first extension reaches the deadline plus the margin;
 * wake-ups (device events) before the coverage runs low send nothing. */
static void test_due_short_wait(void **unused)
{
	struct notify_extender x = { 0 };
	uint64_t now = 100 * SEC, usec = 0;

	assert_true(notify_extend_due(&x, now, now + 5 * SEC, &usec));
	assert_int_equal(usec, 5 * SEC + NOTIFY_EXTEND_MARGIN_USEC);
	assert_int_equal(x.covered_until, now + 5 * SEC + NOTIFY_EXTEND_MARGIN_USEC);
	/* an event one second later, the same deadline: covered */
	assert_false(notify_extend_due(&x, now + SEC, now + 5 * SEC, &usec));
	/* a mount that starts then with its own 90 s deadline: the step bounds it */
	assert_true(notify_extend_due(&x, now + SEC, now + 91 * SEC, &usec));
	assert_int_equal(usec, NOTIFY_EXTEND_STEP_USEC + NOTIFY_EXTEND_MARGIN_USEC);
}

/* No deadline at all (device-timeout = infinity): extended a step at a time. */
static void test_due_infinite(void **unused)
{
	struct notify_extender x = { 0 };
	uint64_t now = 7 * SEC, usec = 0;

	assert_true(notify_extend_due(&x, now, USEC_INFINITY, &usec));
	assert_int_equal(usec, NOTIFY_EXTEND_STEP_USEC + NOTIFY_EXTEND_MARGIN_USEC);
	assert_false(notify_extend_due(&x, now + 10 * SEC, USEC_INFINITY, &usec));
	/* once less than half a margin would be left after the next look */
	assert_true(notify_extend_due(&x, now + 16 * SEC, USEC_INFINITY, &usec));
	assert_int_equal(x.covered_until,
			 now + 16 * SEC + NOTIFY_EXTEND_STEP_USEC + NOTIFY_EXTEND_MARGIN_USEC);
}

/* A copy polled every 250 ms: one message per half margin, not per poll. */
static void test_due_polling(void **unused)
{
	struct notify_extender x = { 0 };
	uint64_t usec, sent = 0;

	for (uint64_t t = 0; t < 60 * SEC; t += 250 * USEC_PER_MSEC)
		sent += notify_extend_due(&x, t, t + 250 * USEC_PER_MSEC, &usec);
	assert_int_equal(sent, 60 * SEC / (NOTIFY_EXTEND_MARGIN_USEC / 2));
	/* a deadline already past: the margin from now */
	x = (struct notify_extender){ 0 };
	assert_true(notify_extend_due(&x, 50 * SEC, 40 * SEC, &usec));
	assert_int_equal(usec, NOTIFY_EXTEND_MARGIN_USEC);
}

/* The datagram on a socket named by $NOTIFY_SOCKET, and nothing without it. */
static void test_send(void **unused)
{
	char dir[] = "/tmp/test_notify.XXXXXX", path[108], got[128] = "";
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct notify_extender x = { 0 };
	int fd;
	ssize_t n;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/notify", dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);

	unsetenv("NOTIFY_SOCKET");
	assert_false(notify_socket_set());
	assert_int_equal(notify_send("READY=1"), 0);
	notify_keep_ahead(&x, USEC_INFINITY);
	assert_int_equal(x.covered_until, 0); /* nobody listens: nothing recorded */

	setenv("NOTIFY_SOCKET", path, 1);
	assert_true(notify_socket_set());
	notify_keep_ahead(&x, now_monotonic_usec() + 5 * SEC);
	n = recv(fd, got, sizeof(got) - 1, 0);
	assert_true(n > 0);
	got[n] = '\0';
	assert_int_equal(strncmp(got, "EXTEND_TIMEOUT_USEC=", 20), 0);
	assert_true(strtoull(got + 20, NULL, 10) >= 5 * SEC + NOTIFY_EXTEND_MARGIN_USEC - SEC);
	/* covered: no second message */
	notify_keep_ahead(&x, now_monotonic_usec() + 5 * SEC);
	assert_true(recv(fd, got, sizeof(got), 0) < 0 && errno == EAGAIN);
	assert_int_equal(notify_send("READY=1\nSTATUS=%s", "all done"), 1);
	n = recv(fd, got, sizeof(got) - 1, 0);
	assert_int_equal(n, 23);
	got[n] = '\0';
	assert_string_equal(got, "READY=1\nSTATUS=all done");
	setenv("NOTIFY_SOCKET", "relative", 1);
	assert_int_equal(notify_send("READY=1"), -EINVAL);
	unsetenv("NOTIFY_SOCKET");
	close(fd);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),	     cmocka_unit_test(test_due_short_wait),
		cmocka_unit_test(test_due_infinite), cmocka_unit_test(test_due_polling),
		cmocka_unit_test(test_send),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
