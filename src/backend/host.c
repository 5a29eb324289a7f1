/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The "host" backend: launches timed on the host clock, for the Triton interpreter, where a
 * kernel runs on the CPU inside the launch call. The Python launch hook reads
 * fp_prof_clock_ns() around the interpreted launch and calls fp_host_launch(); this file turns
 * that into a fixed-size event and hands it to the sessions together with the launch context of
 * the calling thread. There is nothing to buffer, so flush and stop have nothing to do. It does
 * not time GPU kernels (that is CUPTI's job) and does not read Python frames (the extension's).
 */
#include "fp-setup.h"

#include <flagprism/backend.h>

#include "prof/prof-internal.h"

static int host_start(struct fp_prof_session *s, struct fp_diag *diag)
{
	(void)diag;
	/* "CPU" is the device type the kernels are filed under; proton-viewer's time metrics
	 * read this table untouched (only its "util" metric needs CUDA/HIP entries). */
	return fp_prof_session_set_device_str(s, "CPU", "0", "arch", "interpreter");
}

static int host_stop(struct fp_prof_session *s)
{
	(void)s;
	return FP_OK;
}

static int host_flush(struct fp_prof_session *s)
{
	(void)s;
	return FP_OK;
}

static const struct fp_backend_ops host_ops = {
	.name = "host",
	.version = "1",
	.start = host_start,
	.stop = host_stop,
	.flush = host_flush,
};

const struct fp_backend_ops *fp_backend_host(void)
{
	return &host_ops;
}

int fp_host_launch(int session, const struct fp_prof_launch *l, uint64_t begin_ns, uint64_t end_ns)
{
	struct fp_prof_event ev;
	uint32_t cpu;
	int rc;

	if (!l || end_ns < begin_ns)
		return FP_EINVAL;
	rc = fp_prof_name_intern("CPU", 3, &cpu);
	if (rc)
		return rc;
	memset(&ev, 0, sizeof(ev));
	ev.kind = FP_PROF_EVENT_KERNEL;
	ev.device_id = l->device_id;
	ev.device_type = cpu;
	ev.kernel = l->kernel;
	ev.callpath = l->callpath;
	memcpy(ev.grid, l->grid, sizeof(ev.grid));
	ev.begin_ns = begin_ns;
	ev.end_ns = end_ns;
	/* One track per launching thread: interpreted launches on one thread never overlap. */
	ev.stream = fp__prof_thread_index();
	ev.correlation = fp_prof_correlation_next();
	return fp__prof_host_record(session, l, &ev);
}
