/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The version of the library actually linked (which may differ from the headers a client was
 * compiled against).
 */
#include "fp-setup.h"

#include <flagprism/version.h>

const char *fp_version_string(void)
{
	return FP_VERSION_STRING;
}

unsigned fp_version(void)
{
	return (FP_VERSION_MAJOR << 16) | (FP_VERSION_MINOR << 8) | FP_VERSION_PATCH;
}
