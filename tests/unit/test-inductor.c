/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where Inductor kernels came from (include/flagprism/inductor.h), on a module and post-grad
 * graph Inductor generated (torch 2.13 on the CPU, kernels' sources cut short): FX nodes, ATen
 * ops and model lines per kernel, a kernel absent from the module, comments without a graph,
 * the fragment used when the mapping is missing, hostile bytes, and caps.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <flagprism/inductor.h>
#include <flagprism/strbuf.h>

#include "test.h"

struct texts {
	char *module, *graph;
	size_t mlen, glen;
};

static struct texts load(void)
{
	struct texts t;

	t.module = fpt_slurp(fpt_data_path("inductor/forward_module.py.txt"), &t.mlen);
	t.graph = fpt_slurp(fpt_data_path("inductor/forward_post_grad.txt"), &t.glen);
	return t;
}

static void unload(struct texts *t)
{
	free(t->module);
	free(t->graph);
}

static int origin(const struct texts *t, const char *kernel, bool graph, struct fp_strbuf *note,
		  struct fp_inductor_origin *o)
{
	fp_strbuf_reset(note);
	return fp_inductor_origin(t->module, t->mlen, kernel, strlen(kernel),
				  graph ? t->graph : NULL, graph ? t->glen : 0, note, o);
}

TEST(inductor_origin_forward)
{
	struct texts t = load();
	struct fp_inductor_origin o;
	struct fp_strbuf note;

	fp_strbuf_init(&note, 1 << 16);
	ASSERT_OK(origin(&t, "triton_poi_fused_gelu_mul_1", true, &note, &o));
	ASSERT_STREQ(
		note.buf,
		"source_nodes\tgelu, mul\n"
		"aten_ops\taten.gelu, aten.mul\n"
		"source_lines\t/w/ind.py:20 in forward: return torch.nn.functional.gelu(h) * 2");
	ASSERT_STREQ(o.frame, "/w/ind.py:forward@20");
	ASSERT_EQ(o.lines, 1);
	ASSERT_EQ(o.nodes, 6); /* add_1, erf, mul_1, mul_2, mul_3, mul_4 */
	ASSERT_OK(origin(&t, "triton_per_fused_native_layer_norm_0", true, &note, &o));
	ASSERT_STREQ(note.buf,
		     "source_nodes\th\n"
		     "aten_ops\taten.native_layer_norm\n"
		     "source_lines\t/w/ind.py:18 in forward: h = torch.nn.functional.layer_norm(x, "
		     "(64,))");
	ASSERT_STREQ(o.frame, "/w/ind.py:forward@18");
	/* without the graph: nodes and ops, no lines, no frame */
	ASSERT_OK(origin(&t, "triton_poi_fused_gelu_mul_1", false, &note, &o));
	ASSERT_STREQ(note.buf, "source_nodes\tgelu, mul\naten_ops\taten.gelu, aten.mul");
	ASSERT_STREQ(o.frame, "");
	ASSERT_EQ(o.lines, 0);
	/* a name that is only a prefix of a kernel's, or absent */
	ASSERT_EQ(origin(&t, "triton_poi_fused_gelu_mul", true, &note, &o), FP_ENOENT);
	ASSERT_EQ(origin(&t, "extern_kernels", true, &note, &o), FP_ENOENT);
	ASSERT_EQ(note.len, 0);
	ASSERT_EQ(fp_inductor_origin(NULL, 0, "k", 1, NULL, 0, &note, &o), FP_EINVAL);
	ASSERT_EQ(fp_inductor_origin("x", 1, "k", 1, NULL, 3, &note, &o), FP_EINVAL);
	fp_strbuf_release(&note);
	unload(&t);
}

TEST(inductor_origin_shapes)
{
	/* older comments ("# Source Nodes:"), a fragment but no mapping, control bytes, and a
	 * "No stacktrace" group that must not inherit the line above it */
	static const char module[] =
		"# Source Nodes: [relu], Original ATen: [aten.relu]\n"
		"# Graph fragment:\n"
		"#   %relu : Tensor = call_function[target=torch.ops.aten.relu.default](args = (%x,))\n"
		"#   %other : Tensor = PlaceHolder[target=other]\n"
		"k0 = async_compile.triton('k0', '''\n"
		"''')\n"
		"x = 1\n"
		"k1 = async_compile.triton('k1', '''\n";
	static const char graph[] = "class G(torch.nn.Module):\n"
				    "    def forward(self, x):\n"
				    "        # File: /m/a.py:7 in f, code: y = x.relu()\t\x01\n"
				    "        relu: \"f32[4]\" = torch.ops.aten.relu.default(x)\n"
				    "        # No stacktrace found for following nodes\n"
				    "        other = torch.ops.aten.neg.default(relu)\n"
				    "        return (relu,)\n";
	struct fp_inductor_origin o;
	struct fp_strbuf note;

	fp_strbuf_init(&note, 4096);
	ASSERT_OK(fp_inductor_origin(module, sizeof(module) - 1, "k0", 2, graph, sizeof(graph) - 1,
				     &note, &o));
	ASSERT_STREQ(note.buf, "source_nodes\trelu\naten_ops\taten.relu\n"
			       "source_lines\t/m/a.py:7 in f: y = x.relu()  ");
	ASSERT_EQ(o.nodes, 1);
	ASSERT_STREQ(o.frame, "/m/a.py:f@7");
	/* k1: a definition with no comments above it (a blank line ends a block) */
	fp_strbuf_reset(&note);
	ASSERT_OK(fp_inductor_origin(module, sizeof(module) - 1, "k1", 2, graph, sizeof(graph) - 1,
				     &note, &o));
	ASSERT_EQ(note.len, 0);
	ASSERT_EQ(o.nodes, 0);
	/* the note's own cap */
	fp_strbuf_release(&note);
	fp_strbuf_init(&note, 16);
	ASSERT_EQ(fp_inductor_origin(module, sizeof(module) - 1, "k0", 2, graph, sizeof(graph) - 1,
				     &note, &o),
		  FP_ELIMIT);
	fp_strbuf_release(&note);
}

static int origin_run(void *arg)
{
	const struct texts *t = arg;
	struct fp_inductor_origin o;
	struct fp_strbuf note;
	int rc;

	fp_strbuf_init(&note, 1 << 16);
	rc = fp_inductor_origin(t->module, t->mlen, "triton_poi_fused_gelu_mul_1", 27, t->graph,
				t->glen, &note, &o);
	fp_strbuf_release(&note);
	return rc;
}

TEST(inductor_origin_oom)
{
	struct texts t = load();

	ASSERT_GT(fpt_oom_sweep(origin_run, &t, 0, 2, NULL), 2);
	unload(&t);
}
