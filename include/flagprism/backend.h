/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The adapter contract between the profiler core and a source of device activity, and the
 * registry of adapters. A backend (CUPTI on NVIDIA, the host timer under the Triton interpreter,
 * later roctracer or a vendor's own tracer) implements three calls (start, stop, flush) and
 * delivers what it observes through the session's sink (include/flagprism/sink.h): launches,
 * kernel events, metric values, PC samples. Everything else (context, aggregation, the call
 * tree, files) is the core's, which finds backends here by name. docs/internals/backend-adaptation.md walks
 * through a new backend.
 *
 * This header does not describe how an adapter talks to its vendor library, and it holds no
 * vendor type: a backend keeps those in its own .c file. A backend includes this header and
 * sink.h, never the profiler's (tests/abi/check-layers.py fails the build's tests otherwise).
 */
#ifndef FLAGPRISM_BACKEND_H
#define FLAGPRISM_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include <flagprism/export.h>
#include <flagprism/sink.h>
#include <flagprism/status.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FP_BACKEND_MAX 16 /* registered backends, built-ins included */

/*
 * One backend. All callbacks are called without any profiler lock held, on the thread that
 * called fp_prof_start() / fp_prof_finalize(), with the session's sink handle `s` (s->sink is the
 * process's one sink table, the same for every session).
 *
 *  start: the session is about to become active. Set up the activity source (once per process
 *         if the vendor allows a single subscriber: keep a count of sessions), fill the device
 *         table (s->sink->set_device*) and return FP_OK, or an error (FP_EBUSY: someone else
 *         owns the vendor hook; FP_ENOTSUP: no device or library) with `diag` saying why. On
 *         error the session is discarded.
 *  flush: deliver every event still buffered and return when done. Called before stop at
 *         finalize; may be called at other times.
 *  stop:  the session ends: after this returns, the backend must not touch `s`.
 *
 * Events: fixed-size structs copied by value, delivered from any thread, timestamps on the
 * sink's clock. Launch context (scopes, call path) is captured on the launching thread
 * (s->sink->capture()) and handed back with the event it belongs to. What the backend loses it
 * reports with s->sink->dropped(): nothing is lost silently.
 */
struct fp_backend_ops {
	const char *name;    /* registry key: "host", "null", "cupti"... */
	const char *version; /* free-form, written to the metadata ("1") */
	int (*start)(struct fp_sink_session *s, struct fp_diag *diag);
	int (*stop)(struct fp_sink_session *s);
	int (*flush)(struct fp_sink_session *s);
};

/**
 * Add a backend (the ops struct is borrowed for the life of the process). FP_OK, FP_EINVAL
 * (missing name or callback), FP_EBUSY (name taken), FP_ELIMIT (FP_BACKEND_MAX reached).
 */
FP_EXTERN int fp_backend_register(const struct fp_backend_ops *ops);

/** The backend registered as `name`, or NULL. Built-ins: "host" and "null". */
FP_EXTERN const struct fp_backend_ops *fp_backend_find(const char *name);

/** Backend `i` in registration order (built-ins first), or NULL past the end. */
FP_EXTERN const struct fp_backend_ops *fp_backend_at(size_t i);

/**
 * The sink of the process: what a backend delivers through outside a session's callbacks
 * (fp_host_launch()). The profiler sets it (fp_prof_sink()) before it starts its first session;
 * NULL until then. Setting it is for the profiler only.
 */
FP_EXTERN const struct fp_sink *fp_backend_sink(void);
FP_EXTERN void fp_backend_set_sink(const struct fp_sink *sink);

/* ---- the host backend ------------------------------------------------------------------------- */

/*
 * "host": launches timed on the host, for the Triton interpreter (the kernel runs on the CPU,
 * synchronously, inside the launch call). The Python launch hook reads the sink's clock
 * (fp_prof_clock_ns()) before and after the interpreted launch and calls fp_host_launch(). Start
 * puts {"CPU": {"0": {"arch": "interpreter"}}} in the device table; events carry device type
 * "CPU", the launch's device id, and the calling thread's index as the stream, so one thread's
 * launches never overlap on a timeline track.
 */

/**
 * Record one host-timed launch in session `session` (FP_SINK_ALL: every active one) through the
 * sink's launch_timed(): the launch is filed under the calling thread's context now. `end_ns <
 * begin_ns` is FP_EINVAL. FP_OK, FP_EINVAL, FP_ENOENT (no such session: none was ever started,
 * or not this id), FP_ENOMEM.
 */
FP_EXTERN int fp_host_launch(int session, const struct fp_sink_launch *launch, uint64_t begin_ns,
			     uint64_t end_ns);

/** The host and null backends' ops (also reachable through fp_backend_find()). */
FP_EXTERN const struct fp_backend_ops *fp_backend_host(void);
FP_EXTERN const struct fp_backend_ops *fp_backend_null(void);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_BACKEND_H */
