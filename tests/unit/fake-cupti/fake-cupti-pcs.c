/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PC-sampling entry points of libfakecupti.so: cuptiPCSamplingEnable/Disable/
 * SetConfigurationAttribute/GetData/GetNumStallReasons/GetStallReasons and cuptiGetCubinCrc,
 * with the records a test queued (fake-cupti-pcs.h). Layouts are CUDA 13.0's, written here by
 * hand like the rest of the fake. Not part of FlagPrism.
 *
 * It behaves like CUPTI 13.0 did on an H200: GetData hands over only the records CUPTI's worker
 * thread has decoded (fake_pcs_worker() plays one wake-up; GetData never waits for it), and no
 * totals; Disable joins the worker and hands over everything left that fits, with the totals.
 * In continuous mode (the default) records carry no correlation id.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-cupti-pcs.h"

#define EXPORT __attribute__((visibility("default")))
#define PACKED __attribute__((__packed__, __aligned__(8)))
#define MAXQ 256

struct PACKED stall {
	uint32_t index, samples;
};

struct PACKED pcdata {
	size_t size;
	uint64_t crc, pc;
	uint32_t findex, pad;
	char *fn;
	size_t nstall;
	struct stall *stall;
	uint32_t corr;
};

struct PACKED data {
	size_t size, collect;
	uint64_t total, dropped;
	size_t npcs, remaining;
	uint64_t range;
	struct pcdata *pcs;
	uint64_t nonuser;
	uint8_t hwfull;
};

struct ctx_params {
	size_t size;
	void *priv, *ctx;
};

struct cfg_info {
	int type, status;
	union {
		uint64_t w[3];
		uint32_t u32;
		struct {
			size_t n;
			uint32_t *idx;
		} reasons;
		int mode;
		void *buf;
	} d;
};

struct cfg_params {
	size_t size;
	void *priv, *ctx;
	size_t n;
	struct cfg_info *info;
};

struct get_params {
	size_t size;
	void *priv, *ctx;
	void *data;
};

struct num_params {
	size_t size;
	void *priv, *ctx;
	size_t *n;
};

struct reason_params {
	size_t size;
	void *priv, *ctx;
	size_t n;
	uint32_t *idx;
	char **names;
};

struct crc_params {
	size_t size, cubin_size;
	const void *cubin;
	uint64_t crc;
};

struct queued {
	uint32_t corr, reason, samples;
	uint64_t crc, pc;
	char fn[128];
};

EXPORT int cuptiPCSamplingEnable(struct ctx_params *a);
EXPORT int cuptiPCSamplingDisable(struct ctx_params *a);
EXPORT int cuptiPCSamplingSetConfigurationAttribute(struct cfg_params *a);
EXPORT int cuptiPCSamplingGetData(struct get_params *a);
EXPORT int cuptiPCSamplingGetNumStallReasons(struct num_params *a);
EXPORT int cuptiPCSamplingGetStallReasons(struct reason_params *a);
EXPORT int cuptiGetCubinCrc(struct crc_params *a);

static const uint32_t indexes[] = {FAKE_PCS_SELECTED, FAKE_PCS_LONG_SB, FAKE_PCS_LONG_SB_NOT_ISSUED,
				   FAKE_PCS_MATH};
static const char *const names[] = {
	"smsp__pcsamp_warps_issue_stalled_selected",
	"smsp__pcsamp_warps_issue_stalled_long_scoreboard",
	"smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued",
	"smsp__pcsamp_warps_issue_stalled_math_pipe_throttle",
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int enable_rc, enabled, enables, disables, getdata, mode, period, reasons;
	struct data *buf;
	struct queued q[MAXQ];
	size_t nq, ready; /* ready: the first `ready` records were decoded by the "worker" */
	uint64_t total, dropped;
} p;

EXPORT void fake_pcs_reset(void)
{
	pthread_mutex_lock(&mu);
	memset(&p, 0, sizeof(p));
	pthread_mutex_unlock(&mu);
}

EXPORT void fake_pcs_set_enable_rc(int rc)
{
	p.enable_rc = rc;
}

EXPORT int fake_pcs_state(int what)
{
	switch (what) {
	case FAKE_PCS_ENABLED:
		return p.enabled;
	case FAKE_PCS_ENABLES:
		return p.enables;
	case FAKE_PCS_DISABLES:
		return p.disables;
	case FAKE_PCS_GETDATA:
		return p.getdata;
	case FAKE_PCS_MODE:
		return p.mode;
	case FAKE_PCS_PERIOD:
		return p.period;
	case FAKE_PCS_REASONS:
		return p.reasons;
	default:
		return -1;
	}
}

EXPORT int fake_pcs_push(uint32_t corr, uint64_t crc, uint64_t pc, const char *fn, uint32_t reason,
			 uint32_t samples)
{
	struct queued *e;

	pthread_mutex_lock(&mu);
	if (p.nq == MAXQ) {
		pthread_mutex_unlock(&mu);
		return -1;
	}
	e = &p.q[p.nq++];
	e->corr = corr;
	e->crc = crc;
	e->pc = pc;
	e->reason = reason;
	e->samples = samples;
	snprintf(e->fn, sizeof(e->fn), "%s", fn);
	p.total += samples;
	pthread_mutex_unlock(&mu);
	return 0;
}

EXPORT void fake_pcs_worker(void)
{
	pthread_mutex_lock(&mu);
	p.ready = p.nq;
	pthread_mutex_unlock(&mu);
}

EXPORT void fake_pcs_add_totals(uint64_t total, uint64_t dropped)
{
	pthread_mutex_lock(&mu);
	p.total += total;
	p.dropped += dropped;
	pthread_mutex_unlock(&mu);
}

/* mu held: hand the first `avail` queued records over, as many as fit, and the totals if
 * `totals`; the function names stay ours. */
static void hand_over(struct data *d, size_t avail, int totals)
{
	static char fnames[MAXQ][128];
	size_t i, n = 0;

	d->npcs = 0;
	if (totals) {
		d->total = p.total;
		d->dropped = p.dropped;
		p.total = p.dropped = 0;
	}
	for (i = 0; i < avail && n < d->collect; i++, n++) {
		struct pcdata *o = &d->pcs[n];

		memcpy(fnames[n], p.q[i].fn, sizeof(fnames[n]));
		o->crc = p.q[i].crc;
		o->pc = p.q[i].pc;
		o->fn = fnames[n];
		o->corr = p.mode == 2 ? p.q[i].corr : 0; /* only serialized mode has launch ids */
		o->nstall = 1;
		o->stall[0].index = p.q[i].reason;
		o->stall[0].samples = p.q[i].samples;
	}
	memmove(p.q, p.q + n, (p.nq - n) * sizeof(p.q[0]));
	p.nq -= n;
	p.ready = p.ready > n ? p.ready - n : 0;
	d->npcs = n;
	d->remaining = totals ? p.nq : p.ready;
}

EXPORT int cuptiPCSamplingEnable(struct ctx_params *a)
{
	if (!a || a->size != sizeof(*a))
		return 1;
	if (p.enable_rc)
		return p.enable_rc;
	p.enabled = 1;
	p.enables++;
	return 0;
}

EXPORT int cuptiPCSamplingDisable(struct ctx_params *a)
{
	(void)a;
	pthread_mutex_lock(&mu);
	p.disables++;
	if (p.enabled && p.buf)
		hand_over(p.buf, p.nq, 1);
	p.nq = p.ready = 0; /* what did not fit is discarded */
	p.enabled = 0;
	p.buf = NULL;
	pthread_mutex_unlock(&mu);
	return 0;
}

EXPORT int cuptiPCSamplingSetConfigurationAttribute(struct cfg_params *a)
{
	size_t i;

	if (!p.enabled)
		return 1;
	for (i = 0; i < a->n; i++) {
		struct cfg_info *c = &a->info[i];

		switch (c->type) {
		case 1:
			p.period = (int)c->d.u32;
			break;
		case 2:
			p.reasons = (int)c->d.reasons.n;
			break;
		case 5:
			p.mode = c->d.mode;
			break;
		case 8:
			p.buf = c->d.buf;
			break;
		default:
			break;
		}
	}
	return 0;
}

EXPORT int cuptiPCSamplingGetData(struct get_params *a)
{
	struct data *d = a->data;

	if (!p.enabled)
		return 1;
	pthread_mutex_lock(&mu);
	p.getdata++;
	hand_over(d, p.ready, 0);
	pthread_mutex_unlock(&mu);
	return 0;
}

EXPORT int cuptiPCSamplingGetNumStallReasons(struct num_params *a)
{
	if (!p.enabled)
		return 15; /* NOT_INITIALIZED: Enable must come first */
	*a->n = 4;
	return 0;
}

EXPORT int cuptiPCSamplingGetStallReasons(struct reason_params *a)
{
	size_t i;

	if (!p.enabled || a->n != 4)
		return 1;
	for (i = 0; i < 4; i++) {
		a->idx[i] = indexes[i];
		snprintf(a->names[i], 128, "%s", names[i]);
	}
	return 0;
}

/* FNV-1a: deterministic, so tests can compute the same key. */
EXPORT int cuptiGetCubinCrc(struct crc_params *a)
{
	const unsigned char *b = a->cubin;
	uint64_t h = 1469598103934665603ull;
	size_t i;

	if (!b)
		return 1;
	for (i = 0; i < a->cubin_size; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	a->crc = h;
	return 0;
}
