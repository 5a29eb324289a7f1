/* SPDX-License-Identifier: Apache-2.0 */
/*
 * <flagprism/devmem.h> for every vendor: the arguments checked, the first vendor of the vendor
 * table whose driver opens chosen once (and kept), and each call handed to that vendor's
 * device-memory calls (struct fp__devmem_ops, backend-internal.h). The calls themselves, and
 * the driver they go through, are the vendor folder's (<vendor>/devmem.c). Callers (the Debugger's
 * launch pipeline, the extension) never name a vendor.
 */
#include "fp-setup.h"

#include <stdatomic.h>

#include "backend/backend-internal.h"

/* The device memory of the vendor whose driver opened; NULL until one did. */
static _Atomic(const struct fp__devmem_ops *) active;

/* The vendor's device memory, opening the vendors' drivers in table order the first time.
 * FP_OK, or the first vendor's reason when none opens. */
static int pick(const struct fp__devmem_ops **out, struct fp_diag *diag)
{
	const struct fp__devmem_ops *m = atomic_load_explicit(&active, memory_order_acquire);
	const struct fp__vendor *v;
	struct fp_diag first;
	int rc = FP_OK;
	size_t i;

	if (m) {
		*out = m;
		return FP_OK;
	}
	fp_diag_clear(&first);
	for (i = 0; (v = fp__vendor_at(i)) != NULL; i++) {
		int r;

		if (!v->devmem)
			continue;
		r = v->devmem->open(rc ? NULL : &first);
		if (!r) {
			atomic_store_explicit(&active, v->devmem, memory_order_release);
			*out = v->devmem;
			return FP_OK;
		}
		if (!rc)
			rc = r;
	}
	if (!rc)
		return fp_diag_set(diag, FP_ENOTSUP, 0,
				   "no device memory of any vendor in this build");
	if (diag)
		*diag = first;
	return rc;
}

int fp_devmem_open(struct fp_diag *diag)
{
	const struct fp__devmem_ops *m;

	return pick(&m, diag);
}

int fp_devmem_zero(uint64_t dptr, size_t nbytes, uint64_t stream, struct fp_diag *diag)
{
	const struct fp__devmem_ops *m;
	int st;

	if (!nbytes)
		return FP_OK;
	if ((st = pick(&m, diag)))
		return st;
	return m->zero(dptr, nbytes, stream, diag);
}

int fp_devmem_write(uint64_t dptr, const void *src, size_t n, uint64_t stream, struct fp_diag *diag)
{
	const struct fp__devmem_ops *m;
	int st;

	if (!n)
		return FP_OK;
	if (!src)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_devmem_write: NULL source");
	if ((st = pick(&m, diag)))
		return st;
	return m->write(dptr, src, n, stream, diag);
}

int fp_devmem_read(void *dst, uint64_t dptr, size_t n, uint64_t stream, struct fp_diag *diag)
{
	const struct fp__devmem_ops *m;
	int st;

	if (!n)
		return FP_OK;
	if (!dst)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_devmem_read: NULL destination");
	if ((st = pick(&m, diag)))
		return st;
	return m->read(dst, dptr, n, stream, diag);
}

int fp_devmem_span_add(uint64_t base, size_t size, struct fp_diag *diag)
{
	const struct fp__devmem_ops *m;
	int st;

	if (!base || !size)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_devmem_span_add: empty span");
	if ((st = pick(&m, diag)))
		return st;
	return m->span_add(base, size, diag);
}

void fp_devmem_span_remove(uint64_t base)
{
	const struct fp__devmem_ops *m = atomic_load_explicit(&active, memory_order_acquire);

	if (m) /* no vendor opened: no span was added */
		m->span_remove(base);
}

int fp_devmem_host_alloc(uint64_t dptr, size_t n, void **out, struct fp_diag *diag)
{
	const struct fp__devmem_ops *m;
	int st;

	if (!out || !n)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_devmem_host_alloc: no size or output");
	*out = NULL;
	if ((st = pick(&m, diag)))
		return st;
	return m->host_alloc(dptr, n, out, diag);
}

void fp_devmem_host_free(void *p)
{
	const struct fp__devmem_ops *m = atomic_load_explicit(&active, memory_order_acquire);

	if (p && m)
		m->host_free(p);
}

int fp_devmem_read_async(void *dst, uint64_t dptr, size_t n, uint64_t stream,
			 struct fp_devmem_event **ev, struct fp_diag *diag)
{
	const struct fp__devmem_ops *m;
	int st;

	if (!dst || !ev)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_devmem_read_async: NULL argument");
	if ((st = pick(&m, diag)))
		return st; /* a new event is not made (*ev stays NULL); one given stays the caller's */
	return m->read_async(dst, dptr, n, stream, ev, diag);
}

int fp_devmem_event_wait(struct fp_devmem_event *ev, struct fp_diag *diag)
{
	const struct fp__devmem_ops *m = atomic_load_explicit(&active, memory_order_acquire);

	if (!ev || !m) /* an event comes from read_async, after a vendor opened */
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_devmem_event_wait: NULL event");
	return m->event_wait(ev, diag);
}

void fp_devmem_event_free(struct fp_devmem_event *ev)
{
	const struct fp__devmem_ops *m = atomic_load_explicit(&active, memory_order_acquire);

	if (ev && m)
		m->event_free(ev);
}
