/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Library version. The Python package, the CLI and the extension all report this one number;
 * CMake and pyproject.toml read it from here (keep the three FP_VERSION_* lines as they are).
 */
#ifndef FLAGPRISM_VERSION_H
#define FLAGPRISM_VERSION_H

#include <flagprism/export.h>

#define FP_VERSION_MAJOR 0
#define FP_VERSION_MINOR 1
#define FP_VERSION_PATCH 0

#define FP__STR2(x) #x
#define FP__STR(x) FP__STR2(x)
#define FP_VERSION_STRING \
	FP__STR(FP_VERSION_MAJOR) "." FP__STR(FP_VERSION_MINOR) "." FP__STR(FP_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

/** "MAJOR.MINOR.PATCH" of the library actually linked; static storage. */
FP_EXTERN const char *fp_version_string(void);

/** (MAJOR << 16) | (MINOR << 8) | PATCH of the library actually linked. */
FP_EXTERN unsigned fp_version(void);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_VERSION_H */
