// SPDX-License-Identifier: Apache-2.0
/*
 * The names of a profiling session's choices as users write them: contexts, data and launch
 * hooks, by enum value. The one list the CLI (flagprism profile --context/--data/--hook), the
 * extension (prof_start, prof_choices) and the Python API (flagprism.profiler) read.
 */

#include "fp-setup.h"

#include <flagprism/prof.h>

static const char *const context_names[] = {
	[FP_PROF_CONTEXT_SHADOW] = "shadow",
	[FP_PROF_CONTEXT_PYTHON] = "python",
};

static const char *const data_names[] = {
	[FP_PROF_DATA_TREE] = "tree",
	[FP_PROF_DATA_TRACE] = "trace",
};

static const char *const hook_names[] = {"triton"};

const char *fp_prof_context_name(unsigned i)
{
	return i < FP_ARRAY_SIZE(context_names) ? context_names[i] : NULL;
}

const char *fp_prof_data_name(unsigned i)
{
	return i < FP_ARRAY_SIZE(data_names) ? data_names[i] : NULL;
}

const char *fp_prof_hook_name(unsigned i)
{
	return i < FP_ARRAY_SIZE(hook_names) ? hook_names[i] : NULL;
}
