// SPDX-License-Identifier: GPL-2.0
/* Configure-time check that clang can link a libFuzzer target with the
 * sanitizers (libclang-rt-14-dev provides the runtime). */
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return 0;
}
