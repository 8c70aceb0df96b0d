/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Memory and swap of this machine, from one source: /proc/meminfo (proc(5)).
 */
#ifndef STORAGED_SYSINFO_H
#define STORAGED_SYSINFO_H

#include <stdint.h>

#define SYSINFO_MEMINFO "/proc/meminfo"

struct sysinfo_memory {
	uint64_t total; /* MemTotal, bytes (what N% sizes are a share of) */
	uint64_t available; /* MemAvailable, bytes: what can be used without swapping */
	uint64_t swap_total; /* SwapTotal, bytes */
	uint64_t swap_free; /* SwapFree, bytes */
};

/*
 * @meminfo_path: the file to read, NULL for SYSINFO_MEMINFO (tests pass a
 *                fixture)
 * @ret: filled on success; a field the file lacks (or holds a value that
 *       is not a number of kB) is 0, unknown
 *
 * Reads the "Key:   <n> kB" lines of @meminfo_path.
 *
 * Returns: 0; negative errno when the file cannot be opened (@ret is zeroed
 * then too).
 */
int sysinfo_memory(const char *meminfo_path, struct sysinfo_memory *ret);

/*
 * @m: as sysinfo_memory() read it
 *
 * The largest size a RAM area may have without force = yes: RAM plus swap
 * (MemTotal + SwapTotal), of the same measure N% sizes are a share of, so
 * that size = 100% (tmpfs's own size=100%: all of RAM) is always within
 * it.  A bound on the limit, not on what is free now: tmpfs, zram and brd
 * take pages only as they are written, and MemAvailable moves with the
 * page cache.
 *
 * Returns: bytes; 0 when MemTotal is unknown (no check).
 */
static inline uint64_t sysinfo_memory_room(const struct sysinfo_memory *m)
{
	return m->total ? m->total + m->swap_total : 0;
}

#endif
