/* SPDX-License-Identifier: GPL-2.0-or-later */
/* /proc/meminfo, read once per caller; see sysinfo.h. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "sysinfo.h"
#include "shared/units.h"
#include "util.h"

/* "MemTotal:       24576000 kB" (proc(5)): the value in bytes, or 0 */
static uint64_t field_bytes(const char *value)
{
	char num[32];
	size_t n;
	uint64_t v;

	value += strspn(value, " \t");
	n = strspn(value, "0123456789");
	if (n == 0 || n >= sizeof(num))
		return 0;
	memcpy(num, value, n);
	num[n] = '\0';
	return units_parse_uint(num, UINT64_MAX / 1024, &v) == 0 ? v * 1024 : 0;
}

int sysinfo_memory(const char *meminfo_path, struct sysinfo_memory *ret)
{
	static const struct {
		const char *key;
		size_t offset;
	} keys[] = {
		{ "MemTotal", offsetof(struct sysinfo_memory, total) },
		{ "MemAvailable", offsetof(struct sysinfo_memory, available) },
		{ "SwapTotal", offsetof(struct sysinfo_memory, swap_total) },
		{ "SwapFree", offsetof(struct sysinfo_memory, swap_free) },
	};
	char line[256];
	FILE *f = fopen(meminfo_path ? meminfo_path : SYSINFO_MEMINFO, "re");

	*ret = (struct sysinfo_memory){ 0 };
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
			size_t k = strlen(keys[i].key);

			if (strncmp(line, keys[i].key, k) == 0 && line[k] == ':')
				*(uint64_t *)((char *)ret + keys[i].offset) = field_bytes(line + k + 1);
		}
	fclose(f);
	return 0;
}
