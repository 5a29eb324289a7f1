/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The advice on a profile page (fp_html_profile_add_advice()): the advice's JSON object
 * (fp_advice_write_json(), docs/guide/advise.md) as one data block that the page's script draws
 * as the "Advice" section. It runs no rule itself (src/advise/ does) and reads no file.
 */
#include "fp-setup.h"

#include <flagprism/advise.h>

#include "html/html-internal.h"

int fp_html_profile_add_advice(struct fp_html_page *p, const struct fp_advice *a,
			       struct fp_diag *diag)
{
	struct fp_strbuf sb;
	struct fp_jsonw *w;
	size_t block;
	int rc;

	fp_diag_clear(diag);
	if (!p || !a || p->kind != FP_HTML_PROFILE)
		return fp_diag_set(diag, FP_EINVAL, 0, "not a profile page, or no advice");
	if (p->advice_block >= 0)
		return fp_diag_set(diag, FP_EINVAL, 0, "the page already has an advice");
	fp_strbuf_init(&sb, 0);
	w = fp_jsonw_new_strbuf(&sb, 0);
	if (!w) {
		fp_strbuf_release(&sb);
		return fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
	}
	rc = fp_advice_write_json(a, w);
	if (!rc)
		rc = fp_jsonw_finish(w);
	fp_jsonw_free(w);
	if (rc) {
		fp_strbuf_release(&sb);
		return fp_diag_set(diag, rc, 0, "the advice: %s", fp_strerror(rc));
	}
	p->st.data_bytes += sb.len;
	rc = fp__html_block_add(p, &sb, &block);
	if (rc)
		return fp_diag_set(diag, rc, 0, "the advice: %s", fp_strerror(rc));
	p->advice_block = (long)block;
	return FP_OK;
}
