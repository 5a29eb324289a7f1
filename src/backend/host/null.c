/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The "null" backend: starts, flushes and stops without producing anything. Tests, benchmarks
 * and tools that feed events themselves (fp_prof_kernel(), the sink's kernel()) use it, and it
 * is the smallest example of the adapter contract in include/flagprism/backend.h.
 */
#include "fp-setup.h"

#include <flagprism/backend.h>

static int null_start(struct fp_sink_session *s, struct fp_diag *diag)
{
	(void)s;
	(void)diag;
	return FP_OK;
}

static int null_stop(struct fp_sink_session *s)
{
	(void)s;
	return FP_OK;
}

static int null_flush(struct fp_sink_session *s)
{
	(void)s;
	return FP_OK;
}

static const struct fp_backend_ops null_ops = {
	.name = "null",
	.version = "1",
	.start = null_start,
	.stop = null_stop,
	.flush = null_flush,
};

const struct fp_backend_ops *fp_backend_null(void)
{
	return &null_ops;
}
