/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Level-2 artifacts of a Debugger run: one .npy file per dumped (site, program, execution), with
 * the values converted back from the arena's 64-bit words to the tensor's own dtype (float16,
 * float32, float64; bfloat16 through the npy module's policy, i.e. widened to float32; float8 as
 * float32; integers to their width; bool), address dumps as an int64 address array plus a bool
 * mask array (true = active lane), and tensor_index.json listing every file. The caller
 * (report.c) decides whether artifacts may be written at all (never from an overflowed run).
 */
#include "fp-setup.h"

#include <errno.h>

#include <flagprism/debug-keys.h>
#include <flagprism/json.h>
#include <flagprism/outfile.h>

#include "core/npy-internal.h"
#include "debug/report-internal.h"

#define SIGN63 (UINT64_C(1) << 63)

void fp__dbg_artifact_name(const struct fp__dbg_wctx *c, const struct fp_dbg_record *rec,
			   const char *part, char *buf, size_t size)
{
	const struct fp_dbg_site *s = fp_dbg_run_site(c->run, rec->site);
	const struct fp_dbg_statement *st = fp_dbg_run_statement(c->run, s->statement);
	uint64_t xyz[3];

	fp__dbg_program_xyz(c->launch, rec->program, xyz);
	if (c->launch->grid_ndim <= 1)
		snprintf(buf, size, "site%u_line%u_p%" PRIu64 "_e%u_%s.npy", s->id, st->line,
			 xyz[0], rec->execution, part);
	else
		snprintf(buf, size, "site%u_line%u_p%" PRIu64 "-%" PRIu64 "-%" PRIu64 "_e%u_%s.npy",
			 s->id, st->line, xyz[0], xyz[1], xyz[2], rec->execution, part);
}

static float f32_of(uint64_t bits)
{
	double d;

	memcpy(&d, &bits, sizeof(d));
	return (float)d;
}

static uint32_t f32_bits(float f)
{
	uint32_t x;

	memcpy(&x, &f, sizeof(x));
	return x;
}

/* binary32 -> binary16, round to nearest even (exact for values that came from binary16). */
static uint16_t half_of(float f)
{
	uint32_t x = f32_bits(f), sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff;
	uint32_t man = x & 0x7fffff, hm, rem, half;
	int e = (int)exp - 127 + 15;
	uint16_t h;

	if (exp == 0xff) /* Inf, or NaN with a payload kept non-zero */
		return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
	if (e >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (e <= 0) {
		unsigned shift = (unsigned)(14 - e);

		if (e < -10)
			return (uint16_t)sign;
		man |= 0x800000;
		hm = man >> shift;
		rem = man & ((1u << shift) - 1);
		half = 1u << (shift - 1);
		if (rem > half || (rem == half && (hm & 1)))
			hm++;
		return (uint16_t)(sign | hm);
	}
	hm = man >> 13;
	rem = man & 0x1fff;
	h = (uint16_t)(sign | (uint32_t)e << 10 | hm);
	if (rem > 0x1000 || (rem == 0x1000 && (hm & 1)))
		h++; /* a carry into the exponent is the correct rounding */
	return h;
}

/* binary32 -> bfloat16 bits, round to nearest even; NaNs stay NaNs. */
static uint16_t bf16_of(float f)
{
	uint32_t x = f32_bits(f);

	if ((x & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((x >> 16) | 0x40);
	return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

/*
 * The npy dtype a value dump of `dt` is written as: its own, except float8 (float32) and
 * pointers (int64), which NumPy cannot hold as such.
 */
static enum fp_dtype npy_dtype(enum fp_dtype dt)
{
	if (dt == FP_DTYPE_FLOAT8E4NV || dt == FP_DTYPE_FLOAT8E5)
		return FP_DTYPE_FLOAT32;
	if (dt == FP_DTYPE_POINTER)
		return FP_DTYPE_INT64;
	return dt;
}

/* Convert n dump words of dtype dt into out (fp_dtype_size(npy_dtype(dt)) bytes each). */
static void convert(enum fp_dtype dt, const uint64_t *w, size_t n, void *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t v = w[i];

		switch (dt) {
		case FP_DTYPE_BOOL:
			((uint8_t *)out)[i] = v != 0;
			break;
		case FP_DTYPE_INT8:
		case FP_DTYPE_UINT8:
			((uint8_t *)out)[i] = (uint8_t)v;
			break;
		case FP_DTYPE_INT16:
		case FP_DTYPE_UINT16:
			((uint16_t *)out)[i] = (uint16_t)v;
			break;
		case FP_DTYPE_INT32:
		case FP_DTYPE_UINT32:
			((uint32_t *)out)[i] = (uint32_t)v;
			break;
		case FP_DTYPE_FLOAT16:
			((uint16_t *)out)[i] = half_of(f32_of(v));
			break;
		case FP_DTYPE_BFLOAT16:
			((uint16_t *)out)[i] = bf16_of(f32_of(v));
			break;
		case FP_DTYPE_FLOAT32:
		case FP_DTYPE_FLOAT8E4NV:
		case FP_DTYPE_FLOAT8E5: {
			float f = f32_of(v);

			memcpy((char *)out + 4 * i, &f, 4);
			break;
		}
		default: /* int64, uint64, float64 (bits as stored), pointer */
			memcpy((char *)out + 8 * i, &v, 8);
			break;
		}
	}
}

struct art {
	const struct fp__dbg_wctx *c;
	const char *dir;
	struct fp_jsonw *index;
	void *scratch; /* numel * 8 bytes, the largest dump */
	size_t count;
};

static void index_entry(struct art *a, const struct fp_dbg_record *r, const char *file,
			const char *kind, enum fp_dtype written, enum fp_dtype source,
			const uint64_t *shape, unsigned ndim)
{
	const struct fp_dbg_site *s = fp_dbg_run_site(a->c->run, r->site);
	struct fp_jsonw *w = a->index;
	uint64_t xyz[3];
	unsigned i;

	fp__dbg_program_xyz(a->c->launch, r->program, xyz);
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, FP_DBG_KEY_DUMP_FILE, file);
	fp_jsonw_kv_uint(w, FP_DBG_KEY_DUMP_SITE, s->id);
	fp_jsonw_kv_uint(w, FP_DBG_KEY_DUMP_STATEMENT_LINE,
			 fp_dbg_run_statement(a->c->run, s->statement)->line);
	fp_jsonw_kv_string(w, FP_DBG_KEY_DUMP_NAME, s->name);
	fp_jsonw_kv_string(w, FP_DBG_KEY_DUMP_KIND, kind);
	if (s->kind == FP_DBG_KIND_VALUE)
		fp_jsonw_kv_null(w, FP_DBG_KEY_DUMP_ACCESS);
	else
		fp_jsonw_kv_string(w, FP_DBG_KEY_DUMP_ACCESS, fp_dbg_kind_name(s->kind));
	fp_jsonw_key(w, FP_DBG_KEY_DUMP_PROGRAM);
	fp_jsonw_array_begin(w);
	for (i = 0; i < 3; i++)
		fp_jsonw_uint(w, xyz[i]);
	fp_jsonw_array_end(w);
	fp_jsonw_kv_uint(w, FP_DBG_KEY_DUMP_EXECUTION, r->execution);
	/* what numpy.load() gives back: bfloat16 and float8 arrive widened to float32 */
	fp_jsonw_kv_string(
		w, FP_DBG_KEY_DUMP_DTYPE,
		fp_dtype_name(written == FP_DTYPE_BFLOAT16 ? FP_DTYPE_FLOAT32 : written));
	fp_jsonw_kv_string(w, FP_DBG_KEY_DUMP_SOURCE_DTYPE, fp_dtype_name(source));
	fp_jsonw_key(w, FP_DBG_KEY_DUMP_SHAPE);
	fp_jsonw_array_begin(w);
	for (i = 0; i < ndim; i++)
		fp_jsonw_uint(w, shape[i]);
	fp_jsonw_array_end(w);
	fp_jsonw_object_end(w);
}

static int write_npy(struct art *a, const struct fp_dbg_record *r, const char *part,
		     enum fp_dtype dt, const uint64_t *shape, unsigned ndim, size_t nbytes,
		     const char *kind, enum fp_dtype source)
{
	char name[160], path[4096];
	int st;

	fp__dbg_artifact_name(a->c, r, part, name, sizeof(name));
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", a->dir, name) >= sizeof(path))
		return fp_diag_set(a->c->diag, FP_ELIMIT, 0, "artifact path too long: %s/%s",
				   a->dir, name);
	st = fp_npy_write_file(path, dt, shape, ndim, a->scratch, nbytes, a->c->diag);
	if (st)
		return st;
	a->count++;
	index_entry(a, r, name, kind, dt, source, shape, ndim);
	return FP_OK;
}

static int record_artifacts(struct art *a, const struct fp_dbg_record *r)
{
	const struct fp_dbg_site *s = fp_dbg_run_site(a->c->run, r->site);
	uint64_t shape[3];
	bool flat;
	unsigned ndim = fp_dbg_record_shape(r, shape, &flat, NULL);
	const uint64_t *w;
	size_t n, i;
	int st;

	w = fp_dbg_run_dump(a->c->run, r, &n);
	if (!w)
		return FP_OK;
	if (s->kind == FP_DBG_KIND_VALUE) {
		enum fp_dtype dt = npy_dtype(s->dtype);

		convert(s->dtype, w, n, a->scratch);
		return write_npy(a, r, "value", dt, shape, ndim, n * fp_dtype_size(dt), "value",
				 s->dtype);
	}
	for (i = 0; i < n; i++)
		((uint64_t *)a->scratch)[i] = w[i] & ~SIGN63;
	if ((st = write_npy(a, r, "addr", FP_DTYPE_INT64, shape, ndim, n * 8, "address",
			    FP_DTYPE_POINTER)))
		return st;
	for (i = 0; i < n; i++)
		((uint8_t *)a->scratch)[i] = !(w[i] & SIGN63);
	return write_npy(a, r, "mask", FP_DTYPE_BOOL, shape, ndim, n, "mask", FP_DTYPE_BOOL);
}

int fp__dbg_write_artifacts(const struct fp__dbg_wctx *c, const char *dir, size_t *count)
{
	struct art a = {.c = c, .dir = dir};
	size_t nsites = fp_dbg_run_site_count(c->run), i, j, n, maxn = 1;
	struct fp_outfile of;
	char path[4096];
	int st = FP_OK, st2;

	*count = 0;
	for (i = 0; i < nsites; i++)
		if (fp_dbg_run_site(c->run, i)->ndumps)
			maxn = FP_MAX(maxn, (size_t)fp_dbg_run_site(c->run, i)->numel);
	a.scratch = fp_reallocarray(NULL, maxn, 8);
	if (!a.scratch)
		return fp_diag_set(c->diag, FP_ENOMEM, 0, "out of memory");
	if ((size_t)snprintf(path, sizeof(path), "%s/tensor_index.json", dir) >= sizeof(path)) {
		st = fp_diag_set(c->diag, FP_ELIMIT, 0, "artifact path too long: %s", dir);
		goto fail_open;
	}
	st = fp_outfile_open(&of, path, 0, c->diag);
	if (st)
		goto fail_open;
	a.index = fp_jsonw_new_file(of.f, FP_JSONW_PRETTY);
	if (!a.index) {
		st = fp_diag_set(c->diag, FP_ENOMEM, 0, "out of memory");
		goto fail_writer;
	}
	fp_jsonw_object_begin(a.index);
	fp_jsonw_kv_int(a.index, "schema_version", FP_DBG_SCHEMA_VERSION);
	fp_jsonw_kv_string(a.index, "kernel", c->launch->kernel);
	fp_jsonw_kv_string(a.index, "stem", c->launch->stem);
	fp_jsonw_key(a.index, FP_DBG_KEY_INDEX_ARTIFACTS);
	fp_jsonw_array_begin(a.index);
	for (i = 0; i < nsites && !st; i++) {
		const struct fp_dbg_record *r = fp_dbg_run_records(c->run, i, &n);

		for (j = 0; j < n && !st; j++)
			st = record_artifacts(&a, &r[j]);
	}
	fp_jsonw_array_end(a.index);
	fp_jsonw_object_end(a.index);
	/* The index lists what was written, also when an artifact failed: it is committed on its
	 * own status. */
	st2 = fp_jsonw_finish(a.index);
	fp_jsonw_free(a.index);
	st2 = fp_outfile_finish(&of, st2, st ? NULL : c->diag);
	if (!st && st2)
		st = st2;
	goto fail_open;
fail_writer:
	fp_outfile_abort(&of);
fail_open:
	fp_free(a.scratch);
	*count = a.count;
	return st;
}
