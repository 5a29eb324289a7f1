/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Starting a profiling session (fp_prof_start): its options checked and copied, its name
 * resolved (the directory made absolute, links and ".." followed, so that a later chdir changes
 * nothing) and its outputs checked before anything runs, the session registered and locked
 * (session.c), the process's sink handed to the backends and the backend started. It also
 * holds the feature table every session is given (prof-internal.h lists the rows). The rest of
 * a session's life is in the other session files; finalize is session-write.c's.
 */
#include "fp-setup.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include <flagprism/outfile.h>
#include <flagprism/strbuf.h>

#include "prof/session-internal.h"

/* The rows of FP__PROF_FEATURES, indexed by FP__PROF_F_*. */
static const struct fp__prof_feature *const features[FP__PROF_NFEATURES] = {
#define FP__PROF_FEATURE_ROW(id, name) [FP__PROF_F_##id] = &fp__prof_feature_##name,
	FP__PROF_FEATURES(FP__PROF_FEATURE_ROW)
#undef FP__PROF_FEATURE_ROW
};

/*
 * The name with its directory resolved: realpath() of the directory part (".", for a bare
 * name) and the last component as given. FP_OK and *out (fp_free), FP_EINVAL (a name ending in
 * '/'), FP_EIO (the directory cannot be resolved: diag names the errno), FP_ENOMEM.
 */
static int resolve_name(const char *name, char **out, struct fp_diag *diag)
{
	const char *slash = strrchr(name, '/'), *base = slash ? slash + 1 : name;
	char dir[PATH_MAX], real[PATH_MAX];
	struct fp_strbuf sb;
	size_t n;
	int rc;

	if (!*base)
		return fp_diag_set(diag, FP_EINVAL, 0,
				   "the profile name '%.200s' ends with '/': it names a directory, "
				   "not the start of a file name",
				   name);
	n = slash ? (slash == name ? 1 : (size_t)(slash - name)) : 1;
	if (n >= sizeof(dir))
		return fp_diag_set(diag, FP_EINVAL, 0,
				   "the profile name is too long (ENAMETOOLONG)");
	if (slash)
		memcpy(dir, name, n);
	else
		dir[0] = '.';
	dir[n] = '\0';
	if (!realpath(dir, real))
		return fp_diag_set(diag, FP_EIO, 0, "%.200s: cannot use the directory: %s (%s)",
				   name, strerror(errno), fp_errno_name(errno));
	fp_strbuf_init(&sb, 0);
	rc = fp_strbuf_addstr(&sb, real);
	if (!rc && strcmp(real, "/") != 0)
		rc = fp_strbuf_addch(&sb, '/');
	if (!rc)
		rc = fp_strbuf_addstr(&sb, base);
	if (!rc)
		*out = fp_strbuf_detach(&sb, NULL);
	if (!rc && !*out)
		rc = FP_ENOMEM;
	fp_strbuf_release(&sb);
	return rc ? fp_diag_set(diag, rc, 0, "out of memory") : FP_OK;
}

/*
 * Whether the session's files can be written, checked before anything runs: the directory of
 * `name` takes a new file and the longest file name (name plus the longest writer suffix) fits
 * the file system. A failure at finalize would otherwise come after the whole program ran.
 */
static int check_outputs(const char *name, struct fp_diag *diag)
{
	const char *longest = "";
	struct fp_strbuf path;
	size_t i;
	int rc;

	for (i = 0; fp_prof_writer_at(i); i++)
		if (strlen(fp_prof_writer_at(i)->suffix) > strlen(longest))
			longest = fp_prof_writer_at(i)->suffix;
	fp_strbuf_init(&path, 0);
	rc = fp_strbuf_addstr(&path, name);
	if (!rc)
		rc = fp_strbuf_addstr(&path, longest);
	if (rc) {
		fp_strbuf_release(&path);
		return fp_diag_set(diag, rc, 0, "out of memory");
	}
	rc = fp_outfile_check(path.buf, diag);
	fp_strbuf_release(&path);
	return rc;
}

int fp_prof_start(const struct fp_prof_options *opt, int *session, struct fp_diag *diag)
{
	struct fp_prof_session *s = NULL;
	int rc;

	if (!session)
		return FP_EINVAL;
	rc = fp__prof_session_new(opt, fp_prof_sink(), features, &s, diag);
	if (rc)
		return rc;
	rc = resolve_name(s->name, &s->path, diag);
	if (!rc)
		rc = check_outputs(s->path, diag);
	/* Registered inactive first, so the backend's start can already address it by id. */
	if (!rc)
		rc = fp__prof_register(s, diag);
	if (rc) {
		fp__prof_session_free(s);
		return rc;
	}
	/* backends deliver through the sink; the host backend finds it with fp_backend_sink() */
	fp_backend_set_sink(fp_prof_sink());

	rc = s->backend->start(&s->sink, diag);
	fp__prof_register_end(s, rc);
	if (rc) {
		fp__prof_session_free(s);
		return rc;
	}
	*session = s->id;
	return FP_OK;
}
