/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The backend registry: the vendor table (one row per vendor folder, FP__VENDORS in
 * backend-internal.h) and a name -> `struct fp_backend_ops` table with the vendors' built-in
 * backends first ("host" and "null") and room for more (a vendor's opt-in backend registers
 * itself when a client asks; an embedding program may add its own). The profiler finds
 * backends here; backends never call the profiler (they deliver through the sink,
 * process-sink.c), so the dependency goes one way. Lookups take a mutex; the ops structs are
 * borrowed. It does not start or stop anything: sessions do that (src/prof/session-start.c,
 * session-write.c).
 */
#include "fp-setup.h"

#include <pthread.h>

#include "backend/backend-internal.h"

static const struct fp__vendor *const vendors[] = {
#define FP__VENDOR_ROW(name) &fp__vendor_##name,
	FP__VENDORS(FP__VENDOR_ROW)
#undef FP__VENDOR_ROW
};

static pthread_mutex_t backend_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct fp_backend_ops *extra[FP_BACKEND_MAX];
static size_t nextra;

const struct fp__vendor *fp__vendor_at(size_t i)
{
	return i < FP_ARRAY_SIZE(vendors) ? vendors[i] : NULL;
}

/* Built-in `i` of the vendors' rows, in row order, or NULL past them; *n counts the built-ins
 * walked (all of them when it returns NULL). Built-ins are always there, so the table needs no
 * initialisation call. */
static const struct fp_backend_ops *builtin(size_t i, size_t *n)
{
	size_t v, k;

	*n = 0;
	for (v = 0; v < FP_ARRAY_SIZE(vendors); v++)
		for (k = 0; vendors[v]->backends && vendors[v]->backends[k]; k++, ++*n)
			if (*n == i)
				return vendors[v]->backends[k]();
	return NULL;
}

const struct fp_backend_ops *fp_backend_at(size_t i)
{
	const struct fp_backend_ops *ops;
	size_t nbuiltin;

	ops = builtin(i, &nbuiltin);
	if (ops)
		return ops;
	pthread_mutex_lock(&backend_lock);
	if (i - nbuiltin < nextra)
		ops = extra[i - nbuiltin];
	pthread_mutex_unlock(&backend_lock);
	return ops;
}

const struct fp_backend_ops *fp_backend_find(const char *name)
{
	const struct fp_backend_ops *ops;
	size_t i;

	if (!name)
		return NULL;
	for (i = 0; (ops = fp_backend_at(i)) != NULL; i++)
		if (!strcmp(ops->name, name))
			return ops;
	return NULL;
}

int fp_backend_register(const struct fp_backend_ops *ops)
{
	size_t nbuiltin;
	int rc = FP_OK;

	if (!ops || !ops->name || !*ops->name || !ops->start || !ops->stop || !ops->flush)
		return FP_EINVAL;
	if (fp_backend_find(ops->name))
		return FP_EBUSY;
	builtin(SIZE_MAX, &nbuiltin); /* counts them all */
	pthread_mutex_lock(&backend_lock);
	if (nextra + nbuiltin >= FP_BACKEND_MAX)
		rc = FP_ELIMIT;
	else
		extra[nextra++] = ops;
	pthread_mutex_unlock(&backend_lock);
	return rc;
}
