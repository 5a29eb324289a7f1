/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test controls of libfakecupti.so's range profiler (fake-cupti-profiler.c). Tests reach them
 * with dlsym on the library. Not part of FlagPrism.
 */
#ifndef FAKE_CUPTI_PROFILER_H
#define FAKE_CUPTI_PROFILER_H

#include <stddef.h>

/* fake_prof_state(what) */
enum {
	FAKE_PROF_INIT = 0,    /* cuptiProfilerInitialize - DeInitialize */
	FAKE_PROF_HOSTS,       /* host objects alive */
	FAKE_PROF_ENABLED,     /* range profiler objects alive */
	FAKE_PROF_STARTED,     /* 1 between Start and Stop */
	FAKE_PROF_RANGE_MODE,  /* SetConfig's range (1: auto) */
	FAKE_PROF_REPLAY_MODE, /* SetConfig's replay mode (2: kernel) */
	FAKE_PROF_STOPS,       /* Stop calls */
	FAKE_PROF_DECODES,     /* DecodeData calls */
	FAKE_PROF_STATES
};

#define FAKE_PROF_CONTROL(X)                                          \
	X(void, fake_prof_reset, (void))                              \
	X(void, fake_prof_set_error, (const char *fn, int rc))        \
	X(void, fake_prof_set_unsupported, (const char *metric))      \
	X(void, fake_prof_set_passes, (size_t n))                     \
	X(void, fake_prof_set_dropped, (size_t n))                    \
	X(int, fake_prof_add_range, (const double *values, size_t n)) \
	X(void, fake_prof_set_records, (int mode))                    \
	X(int, fake_prof_state, (int what))                           \
	X(const char *, fake_prof_metric, (size_t i))

/* fake_prof_set_records(mode): kernel records written while the range profiler runs */
enum {
	FAKE_PROF_RECORDS_UNTIMED = 0, /* start = end = 0: CUPTI 13.0 on the H200 (default) */
	FAKE_PROF_RECORDS_NONE = 1,    /* not emitted at all */
	FAKE_PROF_RECORDS_TIMED = 2,   /* with their times, as without the profiler */
};

/* For fake-cupti.c (same library): is the range profiler started, and the records mode. */
int fake_prof__profiling(void);
int fake_prof__records(void);

#define FAKE_PROF_DECLARE(ret, name, params) ret name params;
FAKE_PROF_CONTROL(FAKE_PROF_DECLARE)
#undef FAKE_PROF_DECLARE

#endif /* FAKE_CUPTI_PROFILER_H */
