/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Loading a profile for the viewer, diff, merge and the HTML report: the Hatchet file (or the
 * one a meta file names) read whole, sized up front for big files, and parsed by the Hatchet
 * reader (fp_calltree_parse_hatchet(), src/prof/), with errors prefixed by the file's place; and
 * the meta file beside it, read for its "incomplete" flag and reasons. It does not parse Hatchet
 * text itself (prof/ does) or evaluate metrics (view-metric.c), and prints nothing.
 */
#include "fp-setup.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <flagprism/calltree.h>
#include <flagprism/json.h>
#include <flagprism/strbuf.h>
#include <flagprism/view.h>

/* The JSON reader's default, and what 32-bit offsets into the text can address. */
#define MAX_FILE_BYTES (SIZE_MAX > 0xffffffffu ? (size_t)0x100000000ull : SIZE_MAX)
/* A meta file is a few kilobytes; anything near this is not ours. */
#define META_MAX_BYTES ((size_t)16 << 20)

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* Read a meta file: the incomplete flag and its reasons; problems go to meta_warning. */
static void read_meta(const char *path, struct fp_view_read_info *info)
{
	struct fp_json_limits jl = {META_MAX_BYTES, 0, 0};
	struct fp_json_doc *doc = NULL;
	const struct fp_json_value *root, *reasons;
	struct fp_diag d;
	const char *fmt;
	bool b = false;
	size_t i, used = 0;

	if (fp_json_parse_file(path, &jl, &doc, &d)) {
		snprintf(info->meta_warning, sizeof(info->meta_warning), "%s", d.msg);
		return;
	}
	root = fp_json_root(doc);
	fmt = fp_json_string(fp_json_get(root, "format"), NULL);
	if (!fmt || strcmp(fmt, "flagprism-profile-meta") != 0) {
		snprintf(
			info->meta_warning, sizeof(info->meta_warning),
			"%s: not a FlagPrism meta file (no \"format\": \"flagprism-profile-meta\")",
			path);
		goto out;
	}
	info->has_meta = true;
	fp_json_bool(fp_json_get(root, "incomplete"), &b);
	info->incomplete = b;
	reasons = fp_json_get(root, "incomplete_reasons");
	for (i = 0; i < fp_json_len(reasons) && used + 1 < sizeof(info->reasons); i++) {
		const char *r = fp_json_string(fp_json_at(reasons, i), NULL);
		int k;

		if (!r)
			continue;
		k = snprintf(info->reasons + used, sizeof(info->reasons) - used, "%s%s",
			     used ? "; " : "", r);
		if (k < 0)
			break;
		used = FP_MIN(used + (size_t)k, sizeof(info->reasons) - 1);
	}
out:
	fp_json_doc_free(doc);
}

/*
 * Size the buffer for a large file up front and, on Linux, ask for huge pages: a 100 MB profile
 * otherwise costs 25,000 page faults, a tenth of the whole read. Only a hint; failures are fine.
 */
static void presize(struct fp_strbuf *sb, const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < ((off_t)8 << 20) ||
	    (uint64_t)st.st_size >= MAX_FILE_BYTES)
		return;
	if (fp_strbuf_grow(sb, (size_t)st.st_size + 1) != FP_OK)
		return;
#ifdef MADV_HUGEPAGE
	{
		uintptr_t page = 4096, lo = ((uintptr_t)sb->buf + page - 1) & ~(page - 1);
		uintptr_t hi = ((uintptr_t)sb->buf + sb->alloc) & ~(page - 1);

		if (hi > lo)
			madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
	}
#endif
}

/* A sidecar file is read only when it is a regular file: a FIFO there would block the reader
 * and a device would never end. Anything else there is said in the warning. */
static bool sidecar_exists(const char *path, struct fp_view_read_info *info)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return false;
	if (!S_ISREG(st.st_mode)) {
		snprintf(info->meta_warning, sizeof(info->meta_warning),
			 "%s: not a regular file (%s); not read", path,
			 S_ISFIFO(st.st_mode) ? "a FIFO" :
			 S_ISDIR(st.st_mode)  ? "a directory" :
			 S_ISCHR(st.st_mode)  ? "a character device" :
						"not a file");
		return false;
	}
	return true;
}

/* "path:line:col: msg" from a reader's diag; the structural messages' own " at line L col C"
 * is dropped since the prefix says it. */
static void prefix_diag(struct fp_diag *diag, const char *path)
{
	char msg[sizeof(diag->msg)], at[64], *hit;
	size_t used, n;

	memcpy(msg, diag->msg, sizeof(msg));
	if (diag->line) {
		snprintf(at, sizeof(at), " at line %" PRIu32 " col %" PRIu32, diag->line,
			 diag->col);
		hit = strstr(msg, at);
		if (hit)
			memmove(hit, hit + strlen(at), strlen(hit + strlen(at)) + 1);
		snprintf(diag->msg, sizeof(diag->msg), "%s:%" PRIu32 ":%" PRIu32 ": ", path,
			 diag->line, diag->col);
	} else {
		snprintf(diag->msg, sizeof(diag->msg), "%s: ", path);
	}
	/* The message after the place, cut to fit (the fields stay exact). */
	used = strlen(diag->msg);
	n = FP_MIN(strlen(msg), sizeof(diag->msg) - 1 - used);
	memcpy(diag->msg + used, msg, n);
	diag->msg[used + n] = '\0';
}

int fp_view_read_profile(const char *path, const struct fp_calltree_limits *lim, unsigned flags,
			 struct fp_calltree **out, struct fp_view_read_info *info,
			 struct fp_diag *diag)
{
	struct fp_view_read_info local;
	struct fp_strbuf sb;
	char *hatchet = NULL, *meta = NULL;
	size_t n, stem;
	int rc;

	if (!path || !out)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_view_read_profile: NULL argument");
	if (!info)
		info = &local;
	memset(info, 0, sizeof(*info));
	n = strlen(path);
	hatchet = fp_malloc(n + 16);
	meta = fp_malloc(n + 16);
	if (!hatchet || !meta) {
		rc = fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
		goto fail_names;
	}
	if (ends_with(path, n, ".meta.json")) {
		stem = n - strlen(".meta.json");
		snprintf(meta, n + 16, "%s", path);
		snprintf(hatchet, n + 16, "%.*s.hatchet", (int)stem, path);
	} else {
		stem = ends_with(path, n, ".hatchet") ? n - strlen(".hatchet") :
		       ends_with(path, n, ".json")    ? n - strlen(".json") :
							n;
		snprintf(hatchet, n + 16, "%s", path);
		snprintf(meta, n + 16, "%.*s.meta.json", (int)stem, path);
	}
	if (sidecar_exists(meta, info))
		read_meta(meta, info);

	fp_strbuf_init(&sb, MAX_FILE_BYTES);
	presize(&sb, hatchet);
	rc = fp_strbuf_read_file(&sb, hatchet, diag);
	if (rc) {
		if (info->incomplete && diag) {
			size_t used = strlen(diag->msg);

			snprintf(diag->msg + used, sizeof(diag->msg) - used,
				 " (the meta file says the profile is incomplete: %s)",
				 info->reasons[0] ? info->reasons : "no reason given");
		}
		goto fail_read;
	}
	if (sb.len == 0) {
		rc = fp_diag_set_pos(diag, FP_EFORMAT, 0, 1, 1,
				     "%s:1:1: empty file: expected a Hatchet profile (a JSON array "
				     "[root, device_info])",
				     hatchet);
		info->hatchet.truncated = true;
		goto fail_parse;
	}
	info->bytes = sb.len;
	rc = fp_calltree_parse_hatchet(sb.buf, sb.len, lim, flags, out, &info->hatchet, diag);
	if (rc && diag && rc != FP_ENOMEM)
		prefix_diag(diag, hatchet);
fail_parse:
fail_read:
	fp_strbuf_release(&sb);
fail_names:
	fp_free(meta);
	fp_free(hatchet);
	return rc;
}
