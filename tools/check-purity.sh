#!/bin/bash
# The purity rule: the parsers (src/parse/, with the diagnostics and
# units of src/shared/ they build on) and the planner (src/plan/) take buffers and facts and return values; they touch nothing.  This
# checks it where it cannot be argued with, in the objects that go into
# libstoraged.a: `nm -u` lists what each one imports, and any import of a
# call that reaches the system (a mount, a file or directory opened, read,
# written or looked at, an ioctl, a process spawned) fails the test, naming
# the object and the symbol.  The I/O belongs to the loader (src/world/:
# load.c reads storaged.conf, its drop-ins and the fstab), to
# src/shared/input.c (reading one input file safely) and to src/devices/
# (the btrfs superblock read).
#
# Not counted, on purpose:
#  - stdio on a FILE the caller hands in (fprintf, fputs, fwrite, fclose of
#    an open_memstream/fmemopen stream): the renderer and the diagnostics
#    write where they are told, and fopen is counted, so no parser can get
#    a stream of its own.
#  - libmount's string and table functions (mnt_optstr_*, mnt_fs_*,
#    mnt_table_parse_stream on a fmemopen buffer); those that read the
#    system (mnt_table_parse_file, _fstab, _mtab, _swaps, _dir, the
#    contexts) are counted, as are libblkid and libudev.
#  - getpwnam_r/getgrnam_r in config.o only.  `owner = alice` in
#    storaged.conf must name an account, and the parser is where the error
#    can carry file:line and where the number the rest of the pass uses is
#    made; NSS is a read-only lookup in the account database, it changes
#    nothing and opens nothing storaged decides on.  Moving it would make
#    the parser keep names and every user resolve them, and lose the line.
#    Any other object importing them fails.
#
# Run by `make check` from the build directory ($srcdir is the source
# tree); also by hand: tools/check-purity.sh [BUILD_DIR].
# Exit: 0 pure; 1 an impure import (each one listed), or an object missing.
set -uo pipefail

TEST_NAME=check-purity
src=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
[ -n "${srcdir:-}" ] && src=$(cd "$srcdir" && pwd)
build=${1:-.}
FOLDERS="parse plan"
# pure modules of src/shared/ that the parsers build on
PURE_SHARED="src/shared/diag src/shared/units"

# System calls and library calls that reach the system, by family.
FAMILIES=(
	"mount:mount umount umount2 fsopen fsconfig fsmount fspick move_mount open_tree mount_setattr"
	"open:open open64 openat openat64 openat2 creat creat64 fopen fopen64 freopen fdopen opendir fdopendir dlopen"
	"read/write:read readv pread pread64 preadv preadv2 write writev pwrite pwrite64 pwritev pwritev2 sendfile splice copy_file_range close close_range dup dup2 dup3 fcntl fcntl64 lseek lseek64 fsync fdatasync syncfs sync"
	"ioctl:ioctl"
	"stat:stat stat64 lstat lstat64 fstat fstat64 fstatat fstatat64 newfstatat statx __xstat __lxstat __fxstat __fxstatat access faccessat faccessat2 euidaccess eaccess statfs statfs64 fstatfs fstatfs64 statvfs statvfs64 fstatvfs fstatvfs64"
	"directory:scandir scandir64 scandirat scandirat64 readdir readdir64 readdir_r getdents64 readlink readlinkat realpath canonicalize_file_name glob glob64 nftw ftw"
	"change:mkdir mkdirat rmdir unlink unlinkat rename renameat renameat2 link linkat symlink symlinkat chmod fchmod fchmodat chown fchown fchownat lchown truncate ftruncate mknod mknodat setxattr fsetxattr lsetxattr removexattr getxattr fgetxattr lgetxattr chdir fchdir chroot pivot_root"
	"process:fork vfork clone clone3 execve execv execvp execvpe fexecve posix_spawn posix_spawnp system popen kill waitpid waitid pidfd_open"
	"socket:socket socketpair connect bind listen accept accept4 sendmsg recvmsg"
	"kernel:syscall uname sysinfo swapon swapoff init_module finit_module delete_module"
	"nss:getpwnam getpwnam_r getpwuid getpwuid_r getgrnam getgrnam_r getgrgid getgrgid_r getpwent getgrent"
	"storaged I/O:input_read input_read_at config_load fstab_load file_write_atomic copy_spawn_find spawn_find_program spawn_start spawn_wait sysinfo_memory"
)
# Library calls that read the system, by prefix.
PREFIXES="blkid_ udev_ mnt_context_ mnt_table_parse_file mnt_table_parse_fstab mnt_table_parse_mtab mnt_table_parse_swaps mnt_table_parse_dir mnt_new_table_from_file mnt_new_table_from_dir mnt_get_"
# object:symbol pairs allowed, with the reason in the header above.
ALLOWED="config.o:getpwnam_r config.o:getgrnam_r"

declare -A family_of
for f in "${FAMILIES[@]}"; do
	for s in ${f#*:}; do
		family_of[$s]=${f%%:*}
	done
done

fail=0
checked=0
for folder in $FOLDERS shared; do
	mk=$src/src/$folder/Makemodule.am
	[ -r "$mk" ] || {
		echo "FAIL: $TEST_NAME: $mk not found" >&2
		exit 1
	}
	# the .c files this folder puts into libstoraged_a_SOURCES (of shared/:
	# the pure ones only)
	for c in $(sed -n 's|^[[:space:]]*\(src/'"$folder"'/[A-Za-z0-9_]*\)\.c.*|\1|p' "$mk"); do
		if [ "$folder" = shared ]; then
			case " $PURE_SHARED " in *" $c "*) ;; *) continue ;; esac
		fi
		obj=$build/$c.o
		if [ ! -r "$obj" ]; then
			echo "FAIL: $TEST_NAME: $obj missing: build first (make)" >&2
			fail=1
			continue
		fi
		checked=$((checked + 1))
		for sym in $(nm -u "$obj" | awk '{ print $NF }' | sed 's/@.*//'); do
			why=${family_of[$sym]:-}
			if [ -z "$why" ]; then
				for p in $PREFIXES; do
					case $sym in "$p"*) why="${p%_}* (reads the system)" ;; esac
				done
			fi
			[ -n "$why" ] || continue
			case " $ALLOWED " in *" $(basename "$obj"):$sym "*) continue ;; esac
			echo "FAIL: $TEST_NAME: $c.o imports $sym ($why): $c.c must not touch the system; move the I/O to src/world/, src/devices/ or src/shared/input.c and pass the parser a buffer" >&2
			fail=1
		done
	done
done
[ "$checked" -gt 0 ] || {
	echo "FAIL: $TEST_NAME: no object of src/{${FOLDERS// /,}}/ found under '$build'" >&2
	exit 1
}
[ "$fail" = 0 ] || exit 1
echo "PASS: $TEST_NAME: $checked objects of src/{${FOLDERS// /,}}/ and $PURE_SHARED import no call that touches the system"
