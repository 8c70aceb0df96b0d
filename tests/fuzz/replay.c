/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Replays a fuzz target's corpus without libFuzzer: a plain main() that
 * feeds every file to LLVMFuzzerTestOneInput(), built with the normal
 * compiler (and the sanitizers or valgrind when the test run uses them).
 *
 *   replay_TARGET              every file of the compiled-in CORPUS_DIR
 *   replay_TARGET PATH...      the given files, and every file of the given
 *                              directories (e.g. a crash-* file libFuzzer wrote)
 *
 * Each input is copied into a buffer of exactly its size, so that a read
 * past its end is seen by ASan and valgrind.  A target that breaks its
 * contract aborts; an empty or missing corpus is a failure, not a pass.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

#ifndef CORPUS_DIR
#define CORPUS_DIR NULL
#endif

#define INPUT_MAX (16u << 20) /* bytes: a corpus file is far smaller */

static int read_file(const char *path, uint8_t **ret, size_t *ret_len)
{
	struct stat st;
	uint8_t *buf;
	size_t got = 0;
	int fd, r = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > INPUT_MAX) {
		close(fd);
		return -EINVAL;
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : -EIO;
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	if (r < 0) {
		free(buf);
		return r;
	}
	*ret = buf;
	*ret_len = got;
	return 0;
}

static int replay_file(const char *path)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int r = read_file(path, &buf, &len);

	if (r < 0) {
		fprintf(stderr, "replay: cannot read '%s': %s\n", path, strerror(-r));
		return r;
	}
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

static int is_input(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* Returns the number of inputs replayed, or a negative errno. */
static int replay_dir(const char *dir)
{
	struct dirent **names = NULL;
	int n, count = 0, r = 0;

	n = scandir(dir, &names, is_input, alphasort);
	if (n < 0) {
		r = -errno;
		fprintf(stderr, "replay: cannot read directory '%s': %s\n", dir, strerror(-r));
		return r;
	}
	for (int i = 0; i < n; i++) {
		size_t len = strlen(dir) + strlen(names[i]->d_name) + 2;
		char *path = malloc(len);

		if (path && r == 0) {
			snprintf(path, len, "%s/%s", dir, names[i]->d_name);
			r = replay_file(path);
			count++;
		} else if (!path) {
			r = -ENOMEM;
		}
		free(path);
		free(names[i]);
	}
	free(names);
	return r < 0 ? r : count;
}

static int replay_path(const char *path)
{
	struct stat st;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return replay_dir(path);
	return replay_file(path) < 0 ? -EINVAL : 1;
}

int main(int argc, char **argv)
{
	const char *deflt[] = { CORPUS_DIR };
	const char *const *paths = argc > 1 ? (const char *const *)argv + 1 : deflt;
	int n = argc > 1 ? argc - 1 : 1, total = 0;

	if (!paths[0]) {
		fprintf(stderr, "usage: %s CORPUS_DIR|FILE...\n", argv[0]);
		return 2;
	}
	for (int i = 0; i < n; i++) {
		int r = replay_path(paths[i]);

		if (r < 0)
			return 1;
		printf("replay: %d input%s from %s\n", r, r == 1 ? "" : "s", paths[i]);
		total += r;
	}
	if (total == 0) {
		fprintf(stderr, "replay: no input found: the corpus is empty\n");
		return 1;
	}
	return 0;
}
