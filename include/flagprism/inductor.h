/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where a kernel that PyTorch Inductor (torch.compile) generated came from, read from the text
 * Inductor writes: the comment block above the kernel's definition in its generated module
 * ("Topologically Sorted Source Nodes: [...], Original ATen: [...]", "Source node to ATen node
 * mapping", "Graph fragment") and the post-grad graph Inductor keeps with the compiled graph
 * (CompiledFxGraph.inductor_post_grad_graph_str), whose "# File: path:line in function, code:
 * ..." comments name the model's source lines. The Profiler's Python layer hands both texts over
 * once per kernel; the result is a call-path note (include/flagprism/prof.h) that becomes string
 * properties of the kernel's nodes ("source_lines", "aten_ops", "source_nodes") and a frame for
 * the model line. It does not run or import anything, and knows no Python object.
 */
#ifndef FLAGPRISM_INDUCTOR_H
#define FLAGPRISM_INDUCTOR_H

#include <stddef.h>

#include <flagprism/export.h>
#include <flagprism/status.h>
#include <flagprism/strbuf.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FP_INDUCTOR_MAX_LINES 16u       /* model lines kept per kernel (the rest are counted) */
#define FP_INDUCTOR_MAX_CODE 160u       /* bytes of one line's code kept */
#define FP_INDUCTOR_MAX_TEXT (1u << 30) /* bytes of a module or graph read */

/** What fp_inductor_origin() found. Caller-owned; filled by the call. */
struct fp_inductor_origin {
	char frame[512];   /* "path:function@line" of the first model line, "" if none */
	size_t lines;      /* distinct model lines in the note */
	size_t more_lines; /* model-line groups past FP_INDUCTOR_MAX_LINES, not in the note */
	size_t nodes;      /* post-grad graph nodes the kernel was made of, as the module says */
	int has_source_nodes, has_aten_ops;
};

/**
 * Read where kernel `kernel` (its name, e.g. "triton_poi_fused_gelu_mul_1") of the generated
 * module text `module` came from, and append a note to `note` (lines "key\tvalue"):
 * "source_nodes" (the FX nodes, e.g. "gelu, mul"), "aten_ops" ("aten.gelu, aten.mul") and, when
 * `graph` is given (may be NULL), "source_lines" ("/m.py:20 in forward: return gelu(h) * 2",
 * several joined with " | "). `out` says what was found. Values never hold a tab or a newline.
 * FP_OK; FP_ENOENT (no definition of `kernel` in the module: nothing appended); FP_EINVAL
 * (NULL or empty arguments, a text over FP_INDUCTOR_MAX_TEXT); FP_ENOMEM, FP_ELIMIT (the
 * note's cap). Malformed comments are skipped, never an error: the note says what was read.
 */
FP_EXTERN int fp_inductor_origin(const char *module, size_t module_len, const char *kernel,
				 size_t kernel_len, const char *graph, size_t graph_len,
				 struct fp_strbuf *note, struct fp_inductor_origin *out);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_INDUCTOR_H */
