/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The process's sink (<flagprism/backend.h>): the one table of calls the profiler hands over
 * before it starts its first session, kept for what a backend delivers outside a session's
 * callbacks (the host backend's fp_host_launch()). Within a session's callbacks a backend has it
 * as s->sink. Nothing else: the registry is backend.c.
 */
#include "fp-setup.h"

#include <stdatomic.h>

#include <flagprism/backend.h>

static _Atomic(const struct fp_sink *) process_sink;

const struct fp_sink *fp_backend_sink(void)
{
	return atomic_load(&process_sink);
}

void fp_backend_set_sink(const struct fp_sink *sink)
{
	atomic_store(&process_sink, sink);
}
