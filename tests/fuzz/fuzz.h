/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The libFuzzer entry point every target in tests/fuzz/ defines.  The same
 * target is linked either with libFuzzer (--enable-fuzzing) or with
 * replay.c, a plain main() that feeds it each file of a seed corpus.
 *
 * A target aborts (fuzz_assert) when a parser breaks its documented
 * contract, so that a contract violation is a crash for libFuzzer and a
 * failure for the replay test alike.
 */
#ifndef STORAGED_FUZZ_H
#define STORAGED_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define fuzz_assert(cond)                                                               \
	do {                                                                            \
		if (!(cond)) {                                                          \
			fprintf(stderr, "%s:%d: contract violated: %s\n", __FILE__,     \
				__LINE__, #cond);                                       \
			abort();                                                        \
		}                                                                       \
	} while (0)

#endif
