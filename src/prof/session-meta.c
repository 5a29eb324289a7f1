/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a profiling session records about itself besides the tree: key/value metadata the
 * Python layer reports, device properties, and the session's counters (fp_prof_stats). The
 * metadata file that shows them is written by meta.c; not the writers (session-write.c).
 */
#include "fp-setup.h"

#include "core/core-internal.h"
#include "prof/calltree-internal.h"
#include "prof/session-internal.h"

/* ---- metadata, devices, stats --------------------------------------------------------------- */

struct kv_arg {
	const char *type, *index, *key, *str;
	double value;
};

/* The index of `key` in the sorted keys, or where it would go (*found false). */
static size_t env_find(const struct fp_prof_session *s, const char *key, bool *found)
{
	size_t lo = 0, hi = s->nenv;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(s->env_keys[mid], key);

		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

static int meta_fn(struct fp_prof_session *s, void *argp)
{
	struct kv_arg *a = argp;
	bool found;
	size_t i = env_find(s, a->key, &found);
	char *v, *k;
	int rc;

	if (!found && s->nenv == FP__MAX_ENV) {
		s->env_dropped++;
		return FP_ELIMIT;
	}
	v = fp_strdup(a->str);
	if (!v)
		return FP_ENOMEM;
	if (found) {
		fp_free(s->env_values[i]);
		s->env_values[i] = v;
		return FP_OK;
	}
	k = fp_strdup(a->key);
	rc = k ? FP_OK : FP_ENOMEM;
	if (!rc)
		rc = fp__grow((void **)&s->env_keys, &s->env_keys_alloc, s->nenv + 1,
			      sizeof(*s->env_keys), FP__MAX_ENV);
	if (!rc)
		rc = fp__grow((void **)&s->env_values, &s->env_values_alloc, s->nenv + 1,
			      sizeof(*s->env_values), FP__MAX_ENV);
	if (rc) {
		fp_free(k);
		fp_free(v);
		return rc;
	}
	/* kept sorted: the metadata file lists them by key, and lookups are a bisection */
	memmove(s->env_keys + i + 1, s->env_keys + i, (s->nenv - i) * sizeof(*s->env_keys));
	memmove(s->env_values + i + 1, s->env_values + i, (s->nenv - i) * sizeof(*s->env_values));
	s->env_keys[i] = k;
	s->env_values[i] = v;
	s->nenv++;
	return FP_OK;
}

int fp_prof_set_meta(int session, const char *key, const char *value)
{
	struct kv_arg a = {.key = key, .str = value};

	if (!key || !value)
		return FP_EINVAL;
	return fp__prof_for_sessions(session, meta_fn, &a);
}

static int device_fn(struct fp_prof_session *s, void *argp)
{
	struct kv_arg *a = argp;

	if (a->str)
		return fp_calltree_device_set_str(s->tree, a->type, a->index, a->key, a->str);
	return fp_calltree_device_set(s->tree, a->type, a->index, a->key, a->value);
}

int fp_prof_set_device(int session, const char *type, const char *index, const char *key,
		       double value)
{
	struct kv_arg a = {type, index, key, NULL, value};

	if (!type || !index || !key)
		return FP_EINVAL;
	return fp__prof_for_sessions(session, device_fn, &a);
}

int fp_prof_set_device_str(int session, const char *type, const char *index, const char *key,
			   const char *value)
{
	struct kv_arg a = {type, index, key, value, 0};

	if (!type || !index || !key || !value)
		return FP_EINVAL;
	return fp__prof_for_sessions(session, device_fn, &a);
}

int fp_prof_session_set_device(struct fp_prof_session *s, const char *type, const char *index,
			       const char *key, double value)
{
	struct kv_arg a = {type, index, key, NULL, value};
	int rc;

	if (!s || !type || !index || !key)
		return FP_EINVAL;
	pthread_mutex_lock(&s->lock);
	rc = device_fn(s, &a);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int fp_prof_session_set_device_str(struct fp_prof_session *s, const char *type, const char *index,
				   const char *key, const char *value)
{
	struct kv_arg a = {type, index, key, value, 0};
	int rc;

	if (!s || !type || !index || !key || !value)
		return FP_EINVAL;
	pthread_mutex_lock(&s->lock);
	rc = device_fn(s, &a);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void fp__prof_stats_locked(struct fp_prof_session *s, struct fp_prof_stats *out)
{
	size_t i;

	*out = s->st;
	out->open_scopes = 0;
	for (i = 0; i < s->nthreads; i++)
		out->open_scopes += s->threads[i]->depth + s->threads[i]->dropped;
	out->pending = fp_hashmap_count(&s->pending_map);
	out->nodes = fp_calltree_node_count(s->tree);
}

int fp_prof_session_stats(struct fp_prof_session *s, struct fp_prof_stats *out)
{
	if (!s || !out)
		return FP_EINVAL;
	pthread_mutex_lock(&s->lock);
	fp__prof_stats_locked(s, out);
	pthread_mutex_unlock(&s->lock);
	return FP_OK;
}
