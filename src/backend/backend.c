/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The backend registry: a name -> `struct fp_backend_ops` table with the built-in "host" and
 * "null" backends first and room for more (CUPTI registers itself; an embedding program may add
 * its own), and the process's sink that the profiler hands over before its first session. The
 * profiler finds backends here; backends never call the profiler (they deliver through the sink),
 * so the dependency goes one way. Lookups take a mutex; the ops structs are borrowed. It does not
 * start or stop anything: sessions do that (src/prof/session.c, session-write.c).
 */
#include "fp-setup.h"

#include <pthread.h>
#include <stdatomic.h>

#include <flagprism/backend.h>

static pthread_mutex_t backend_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct fp_backend_ops *extra[FP_BACKEND_MAX];
static size_t nextra;
static _Atomic(const struct fp_sink *) process_sink;

/* Built-ins are always there, so the table needs no initialisation call. */
static const struct fp_backend_ops *builtin(size_t i)
{
	switch (i) {
	case 0:
		return fp_backend_host();
	case 1:
		return fp_backend_null();
	default:
		return NULL;
	}
}

#define NBUILTIN 2

const struct fp_backend_ops *fp_backend_at(size_t i)
{
	const struct fp_backend_ops *ops = NULL;

	if (i < NBUILTIN)
		return builtin(i);
	pthread_mutex_lock(&backend_lock);
	if (i - NBUILTIN < nextra)
		ops = extra[i - NBUILTIN];
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
	int rc = FP_OK;

	if (!ops || !ops->name || !*ops->name || !ops->start || !ops->stop || !ops->flush)
		return FP_EINVAL;
	if (fp_backend_find(ops->name))
		return FP_EBUSY;
	pthread_mutex_lock(&backend_lock);
	if (nextra + NBUILTIN >= FP_BACKEND_MAX)
		rc = FP_ELIMIT;
	else
		extra[nextra++] = ops;
	pthread_mutex_unlock(&backend_lock);
	return rc;
}

const struct fp_sink *fp_backend_sink(void)
{
	return atomic_load(&process_sink);
}

void fp_backend_set_sink(const struct fp_sink *sink)
{
	atomic_store(&process_sink, sink);
}
