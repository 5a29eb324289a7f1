/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The "host" backend: launches timed on the host clock, for the Triton interpreter, where a
 * kernel runs on the CPU inside the launch call. The Python launch hook reads the clock
 * (fp_prof_clock_ns()) around the interpreted launch and calls fp_host_launch(); this file turns
 * that into a fixed-size event and hands it, with the launch, to the process's sink
 * (include/flagprism/sink.h), which files it under the calling thread's context. There is nothing
 * to buffer, so flush and stop have nothing to do. The folder's row of the vendor table lists it
 * and the null backend (null.c) as the registry's built-ins. It does not time device kernels
 * (that is a vendor's backend's job) and does not read Python frames (the extension's).
 */
#include "fp-setup.h"

#include "backend/backend-internal.h"

static int host_start(struct fp_sink_session *s, struct fp_diag *diag)
{
	(void)diag;
	/* "CPU" is the device type the kernels are filed under; proton-viewer's time metrics
	 * read this table untouched (only its "util" metric needs CUDA/HIP entries). */
	return s->sink->set_device_str(s, "CPU", "0", "arch", "interpreter");
}

static int host_stop(struct fp_sink_session *s)
{
	(void)s;
	return FP_OK;
}

static int host_flush(struct fp_sink_session *s)
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

int fp_host_launch(int session, const struct fp_sink_launch *l, uint64_t begin_ns, uint64_t end_ns)
{
	const struct fp_sink *sink = fp_backend_sink();
	struct fp_sink_event ev;
	uint32_t cpu;
	int rc;

	if (!l || end_ns < begin_ns)
		return FP_EINVAL;
	/* no sink yet: the profiler never started a session, so there is none to record in */
	if (!sink)
		return session == FP_SINK_ALL ? FP_OK : FP_ENOENT;
	rc = sink->name_intern("CPU", 3, &cpu);
	if (rc)
		return rc;
	memset(&ev, 0, sizeof(ev));
	ev.kind = FP_SINK_EVENT_KERNEL;
	ev.device_id = l->device_id;
	ev.device_type = cpu;
	ev.kernel = l->kernel;
	ev.callpath = l->callpath;
	memcpy(ev.grid, l->grid, sizeof(ev.grid));
	ev.begin_ns = begin_ns;
	ev.end_ns = end_ns;
	/* One track per launching thread: interpreted launches on one thread never overlap. */
	ev.stream = sink->thread_index();
	ev.correlation = sink->correlation_next();
	return sink->launch_timed(session, l, &ev);
}

/* ---- the folder's row of the vendor table ---------------------------------------------------- */

/* Always in the registry, first: fp_backend_at(0) and (1). */
static const fp__backend_get_fn host_backends[] = {fp_backend_host, fp_backend_null, NULL};

const struct fp__vendor fp__vendor_host = {
	.name = "host",
	.backends = host_backends,
	.devmem = NULL, /* the interpreter's buffers are host memory: the Python layer moves them */
};
