/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where a statement is, for the Debugger's writers: a statement of the kernel's own body is a
 * line of the kernel's file; one inside a @triton.jit helper is a line of the helper's file
 * reached through a chain of call sites (frames), which the reports show as
 * "attn.py:43 _inner -> attn.py:12" (text) or a `chain` array (JSON). Layout of the reports
 * themselves is the writers' business (report-txt.c, report-json.c), not this file's.
 */
#include "fp-setup.h"

#include <flagprism/json.h>

#include "debug/report-internal.h"

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : (path && path[0] ? path : "?");
}

/* The frames from the kernel down to `frame` (outermost first); returns how many. */
static size_t frame_path(const struct fp_dbg_run *run, uint32_t frame,
			 const struct fp_dbg_frame **out, size_t max)
{
	size_t n = 0, i;

	while (frame && n < max) {
		const struct fp_dbg_frame *f = fp_dbg_run_frame(run, frame);

		if (!f)
			break;
		out[n++] = f;
		frame = f->parent;
	}
	for (i = 0; i < n / 2; i++) { /* reverse: outermost first */
		const struct fp_dbg_frame *t = out[i];

		out[i] = out[n - 1 - i];
		out[n - 1 - i] = t;
	}
	return n;
}

#define MAX_PATH_FRAMES 64

size_t fp__dbg_where(const struct fp_dbg_run *run, uint32_t frame, uint32_t line, char *buf,
		     size_t size)
{
	const struct fp_dbg_frame *path[MAX_PATH_FRAMES];
	size_t n = frame_path(run, frame, path, MAX_PATH_FRAMES), i, len = 0;
	int k;

	if (!size)
		return 0;
	buf[0] = '\0';
	if (!n) {
		k = snprintf(buf, size, "line %u", line);
		return k < 0 ? 0 : FP_MIN((size_t)k, size - 1);
	}
	for (i = 0; i < n && len < size - 1; i++) {
		k = snprintf(buf + len, size - len, "%s:%u %s -> ", base_name(path[i]->call_file),
			     path[i]->call_line, path[i]->function);
		if (k < 0)
			return len;
		len = FP_MIN(len + (size_t)k, size - 1);
	}
	if (len < size - 1) {
		k = snprintf(buf + len, size - len, "%s:%u", base_name(path[n - 1]->file), line);
		if (k > 0)
			len = FP_MIN(len + (size_t)k, size - 1);
	}
	return len;
}

const char *fp__dbg_frame_file(const struct fp_dbg_run *run, const struct fp_dbg_launch *l,
			       uint32_t frame)
{
	const struct fp_dbg_frame *f = fp_dbg_run_frame(run, frame);

	return f && f->file[0] ? f->file : l->source_file;
}

void fp__dbg_json_chain(struct fp_jsonw *w, const struct fp_dbg_run *run, uint32_t frame)
{
	const struct fp_dbg_frame *path[MAX_PATH_FRAMES];
	size_t n = frame_path(run, frame, path, MAX_PATH_FRAMES), i;

	fp_jsonw_array_begin(w);
	for (i = 0; i < n; i++) {
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "file", path[i]->call_file);
		fp_jsonw_kv_uint(w, "line", path[i]->call_line);
		fp_jsonw_kv_uint(w, "col", path[i]->call_col);
		fp_jsonw_kv_string(w, "source", path[i]->call_source);
		fp_jsonw_kv_string(w, "function", path[i]->function);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
}
