/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The kernel's own words on a failed mount (kernlog.h). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kernlog.h"
#include "shared/util.h"

int kernlog_open(void)
{
	_cleanup_close_ int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0 || lseek(fd, 0, SEEK_END) < 0)
		return -errno;
	return TAKE_FD(fd);
}

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-';
}

/* @word in @s[0..n) with no name character on either side. */
static bool has_word(const char *s, size_t n, const char *word)
{
	size_t w = strlen(word);

	for (size_t i = 0; w && i + w <= n; i++)
		if (memcmp(s + i, word, w) == 0 && (i == 0 || !word_char(s[i - 1])) &&
		    (i + w == n || !word_char(s[i + w])))
			return true;
	return false;
}

bool kernlog_match(const char *record, size_t n, const char *device, const char *fstype,
		   const char **ret_text, size_t *ret_len)
{
	const char *semi = memchr(record, ';', n), *text, *nl;
	size_t len, f;
	long prio;
	char *end;

	if (!semi || !isdigit((unsigned char)record[0]))
		return false;
	prio = strtol(record, &end, 10);
	if (*end != ',' || (prio & 7) > 4) /* KERN_WARNING and worse */
		return false;
	text = semi + 1;
	nl = memchr(text, '\n', (size_t)(record + n - text));
	len = nl ? (size_t)(nl - text) : (size_t)(record + n - text);
	*ret_text = text;
	*ret_len = len;
	if (device && *device && has_word(text, len, device))
		return true;
	f = fstype ? strlen(fstype) : 0;
	return f && len > f && strncasecmp(text, fstype, f) == 0 && (text[f] == ':' || text[f] == ' ') &&
	       !memmem(text, len, "(device ", 8) && !memmem(text, len, "): ", 3);
}

/* Appends @s[0..n) to @buf, after "; " when it holds something already. */
static void append(char *buf, size_t len, const char *s, size_t n)
{
	size_t have = strnlen(buf, len);

	if (have && have + 2 < len) {
		memcpy(buf + have, "; ", 2);
		have += 2;
	}
	if (n > len - have - 1)
		n = len - have - 1;
	memcpy(buf + have, s, n);
	buf[have + n] = '\0';
}

unsigned kernlog_collect(int fd, const char *device, const char *fstype, char *buf, size_t len)
{
	char rec[8192];
	const char *text;
	size_t tlen;
	unsigned found = 0;
	ssize_t n;

	if (len)
		buf[0] = '\0';
	/* one record a read(2); -EPIPE: records overwritten meanwhile, the
	 * next read goes on with the oldest left */
	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0 || (n < 0 && (errno == EPIPE || errno == EINTR)))
		if (n > 0 && kernlog_match(rec, (size_t)n, device, fstype, &text, &tlen)) {
			append(buf, len, text, tlen);
			found++;
		}
	return found;
}

unsigned kernlog_fs_context(int fsfd, char *buf, size_t len)
{
	char msg[1024];
	unsigned found = 0;
	ssize_t n;

	if (len)
		buf[0] = '\0';
	/* "e TEXT", "w TEXT", "i TEXT"; ENODATA when none is left */
	while ((n = read(fsfd, msg, sizeof(msg) - 1)) > 0) {
		while (n > 0 && msg[n - 1] == '\n')
			n--;
		if (n > 2 && (msg[0] == 'e' || msg[0] == 'w') && msg[1] == ' ') {
			append(buf, len, msg + 2, (size_t)n - 2);
			found++;
		}
	}
	return found;
}

void kernlog_device_name(const char *source, char *buf, size_t len)
{
	char *real = source && source[0] == '/' ? realpath(source, NULL) : NULL;
	const char *base;

	if (len)
		buf[0] = '\0';
	if (real && strncmp(real, "/dev/", 5) == 0 && (base = strrchr(real, '/')) && base[1] &&
	    strlen(base + 1) < len)
		memcpy(buf, base + 1, strlen(base + 1) + 1);
	free(real);
}

int kernlog_stderr_begin(struct kernlog_stderr *c)
{
	int r;

	c->capture = memfd_create("storaged-helper-stderr", MFD_CLOEXEC);
	c->saved = c->capture < 0 ? -1 : fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	/* dup2(2) clears FD_CLOEXEC on fd 2: the helper inherits it */
	if (c->saved >= 0 && dup2(c->capture, STDERR_FILENO) >= 0)
		return 0;
	r = -errno;
	safe_close(c->capture);
	safe_close(c->saved);
	*c = (struct kernlog_stderr){ .capture = -1, .saved = -1 };
	return r;
}

void kernlog_stderr_end(struct kernlog_stderr *c, char *buf, size_t len)
{
	char raw[1024];
	ssize_t n = -1, passed_on = 0;
	size_t k = 0;

	if (len)
		buf[0] = '\0';
	if (c->capture < 0)
		return;
	if (dup2(c->saved, STDERR_FILENO) >= 0)
		n = pread(c->capture, raw, sizeof(raw) - 1, 0);
	/* passed on; if storaged's stderr is gone, the words still go to @buf */
	if (n > 0)
		passed_on = write(STDERR_FILENO, raw, (size_t)n);
	for (ssize_t i = 0; n > 0 && i <= n; i++)
		if (i == n || raw[i] == '\n') {
			if ((size_t)i > k)
				append(buf, len, raw + k, (size_t)i - k);
			k = (size_t)i + 1;
		}
	(void)passed_on;
	close(c->capture);
	close(c->saved);
	*c = (struct kernlog_stderr){ .capture = -1, .saved = -1 };
}
