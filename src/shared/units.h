/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Parsing and formatting of the values users write: sizes, counts,
 * durations, booleans, factors.  Pure, overflow-checked; the only place in
 * storaged that turns text into numbers.
 */
#ifndef STORAGED_UNITS_H
#define STORAGED_UNITS_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/*
 * @s: "4096", "512K", "12800M", "1.5G", "2T" (suffixes K M G T P, with
 *     an optional "iB": binary multiples, 1K = 1024 bytes, as tmpfs(5)
 *     size= does; with "B", decimal ones, 1KB = 1000 bytes, as util-linux
 *     reads sizes); surrounding blanks are not accepted
 * @ret_bytes: result in bytes, set only on success
 *
 * A fraction is allowed with a suffix ("1.5G"); the result is rounded down to
 * whole bytes.  "%" values and "auto" are not sizes: see units_parse_percent().
 *
 * Returns: 0; -EINVAL for malformed text or a negative value; -ERANGE when
 * the value does not fit in 64 bits.
 */
int units_parse_size(const char *s, uint64_t *ret_bytes);

/*
 * @s: "25%" (integer 1..100 followed by "%")
 * @ret_percent: 1..100, set only on success
 *
 * Returns: 0; -EINVAL when @s is not a percentage; -ERANGE outside 1..100.
 */
int units_parse_percent(const char *s, unsigned *ret_percent);

/*
 * @s: "300000", "10k", "2M" (suffixes k/K M G: binary multiples, as the
 *     kernel's memparse() reads tmpfs nr_inodes=)
 *
 * Returns: 0; -EINVAL malformed or negative; -ERANGE overflow.
 */
int units_parse_count(const char *s, uint64_t *ret);

/*
 * @s: decimal digits only
 *
 * Returns: 0; -EINVAL malformed; -ERANGE above @max.
 */
int units_parse_uint(const char *s, uint64_t max, uint64_t *ret);

/*
 * @s: "90s", "2min", "500ms", "1h", "1min 30s", "90" (bare number: seconds,
 *     as systemd.time(7)), or "infinity"
 * @ret_usec: microseconds, USEC_INFINITY for "infinity"; set only on success
 *
 * Units follow systemd.time(7): us, ms, s/sec, m/min, h/hr, d.
 *
 * Returns: 0; -EINVAL malformed or negative; -ERANGE overflow.
 */
int units_parse_duration(const char *s, uint64_t *ret_usec);

/*
 * @s: yes/no, true/false, on/off, 1/0 (case-insensitive)
 *
 * Returns: 0 and sets @ret; -EINVAL otherwise.
 */
int units_parse_bool(const char *s, bool *ret);

/*
 * @s: a positive decimal such as "2.0" or "1.25" (at most 1000)
 *
 * Returns: 0; -EINVAL malformed, zero or negative; -ERANGE above 1000.
 */
int units_parse_factor(const char *s, double *ret);

/*
 * @s: octal file mode such as "0755" or "1777" (at most 07777)
 *
 * Returns: 0 and sets @ret; -EINVAL malformed; -ERANGE above 07777.
 */
int units_parse_mode(const char *s, unsigned *ret);

/*
 * @mode: a mode (at most 07777) to be given to a directory: an area's
 *        root (mode =), a mount point (fstab X-mount.mode=)
 * @ret_fixed: set, when refused, to the mode to write instead
 *
 * The one rule for the special bits of a directory's mode: the sticky
 * and set-group-ID bits are kept, the set-user-ID bit is refused.
 * Returns: NULL when @mode is kept; else why it is not, a static string
 * to follow what the user wrote ("mode = 4755 <why>; write ...").
 */
const char *units_dir_mode_refusal(unsigned mode, unsigned *ret_fixed);

/*
 * @buf: at least 16 bytes
 *
 * Writes the shortest exact form ("12800M", "1G", "4096") when one exists,
 * else one decimal rounded down ("1.5G"): for messages; what is given to
 * mount as size= takes units_format_size_exact().  Returns: @buf.
 */
char *units_format_size(uint64_t bytes, char *buf, size_t len);

/*
 * @buf: at least 21 bytes (UINT64_MAX in bytes)
 *
 * Writes @bytes as a mount option takes it: with the largest binary unit
 * that divides it ("12800M", "4K"), else as bytes ("1395864371").
 * Returns: @buf.
 */
char *units_format_size_exact(uint64_t bytes, char *buf, size_t len);

/*
 * @buf: at least 16 bytes
 *
 * Writes @bytes for people to read, as lsblk(8) prints sizes (units.c):
 * "519.2M", "2.1G", "16M", "512B".  Not exact: configuration values and
 * the plan use units_format_size(), machine output the bytes.
 * Returns: @buf.
 */
char *units_format_size_human(uint64_t bytes, char *buf, size_t len);

/*
 * @one: the noun for one ("block device")
 * @many: the noun for none or several ("block devices")
 *
 * Writes "no block devices", "1 block device", "2 block devices": a count
 * in words, never "device(s)".  Returns: @buf.
 */
char *units_format_count(uint64_t n, const char *one, const char *many, char *buf, size_t len);

/*
 * @usec: microseconds (USEC_INFINITY prints "infinity")
 * @buf: at least 32 bytes
 *
 * Writes e.g. "90s", "2min", "1min 30s", "500ms".  Returns: @buf.
 */
char *units_format_duration(uint64_t usec, char *buf, size_t len);

#endif
