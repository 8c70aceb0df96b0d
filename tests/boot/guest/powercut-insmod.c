/* SPDX-License-Identifier: GPL-2.0-or-later */
/* insmod FILE: loads one kernel module (finit_module(2)), for the
 * power-cut guest, which has no kmod. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fd = argc == 2 ? open(argv[1], O_RDONLY | O_CLOEXEC) : -1;

	if (fd < 0 || syscall(SYS_finit_module, fd, "", 0) < 0) {
		perror(argc == 2 ? argv[1] : "usage: insmod FILE");
		return 1;
	}
	return 0;
}
