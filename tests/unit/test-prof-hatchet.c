/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for the Hatchet writer and reader: file shape, determinism, round trips, Proton's
 * files, positioned errors on malformed or foreign input, and the reader's OOM sweep. */
#define _GNU_SOURCE 1
#include <stdlib.h>
#include <unistd.h>

#include <flagprism/alloc.h>
#include <flagprism/calltree.h>
#include <flagprism/json.h>
#include <flagprism/strbuf.h>

#include "test-tree.h"
#include "test.h"

static struct fp_calltree *sample_tree(void)
{
	static const char *const k1[] = {"main.py:run@10", "matmul_kernel"};
	static const char *const k2[] = {"main.py:run@10", "add_kernel"};
	static const char *const k3[] = {"step", "state A", "add_kernel"};
	static const char *const s1[] = {"main.py:run@10"};
	struct fp_calltree *t = fp_calltree_new(NULL);
	uint32_t n;

	n = fpt_tree_path(t, k1, 2);
	fpt_tree_add(t, n, "time (ns)", 183000);
	fpt_tree_add(t, n, "count", 3);
	fpt_tree_add(t, n, "flops16", 1.5e12);
	fpt_tree_add(t, n, "bytes", 0.25);
	fpt_tree_str(t, n, "device_id", "0");
	fpt_tree_str(t, n, "device_type", "CUDA");
	n = fpt_tree_path(t, k2, 2);
	fpt_tree_add(t, n, "time (ns)", 1000);
	fpt_tree_add(t, n, "count", 1);
	fpt_tree_str(t, n, "device_id", "1");
	n = fpt_tree_path(t, k3, 3);
	fpt_tree_add(t, n, "time (ns)", 7);
	fpt_tree_add(t, n, "count", 1);
	n = fpt_tree_path(t, s1, 1);
	fpt_tree_add(t, n, "cpu_time (ns)(exc)", 99);
	fpt_tree_add(t, n, "lat (min)", -3);
	fpt_tree_add(t, n, "tag (pty)", 4);
	ASSERT_OK(fp_calltree_device_set_str(t, "CUDA", "0", "arch", "90"));
	ASSERT_OK(fp_calltree_device_set(t, "CUDA", "0", "num_sms", 132));
	ASSERT_OK(fp_calltree_device_set(t, "CUDA", "0", "clock_rate", 1980000));
	ASSERT_OK(fp_calltree_device_set(t, "CUDA", "1", "num_sms", 114));
	return t;
}

static char *to_json(struct fp_calltree *t, unsigned flags)
{
	struct fp_strbuf sb;
	struct fp_jsonw *w;

	fp_strbuf_init(&sb, 0);
	w = fp_jsonw_new_strbuf(&sb, flags);
	ASSERT_NOT_NULL(w);
	ASSERT_OK(fp_calltree_write_hatchet(t, w));
	ASSERT_OK(fp_jsonw_finish(w));
	fp_jsonw_free(w);
	return fp_strbuf_detach(&sb, NULL);
}

static const struct fp_json_value *child_named(const struct fp_json_value *node, const char *name)
{
	const struct fp_json_value *kids = fp_json_get(node, "children");
	size_t i;

	for (i = 0; i < fp_json_len(kids); i++) {
		const struct fp_json_value *k = fp_json_at(kids, i);

		if (!strcmp(fp_json_string(fp_json_get(fp_json_get(k, "frame"), "name"), NULL),
			    name))
			return k;
	}
	return NULL;
}

/* Every node: frame {name, type "function"}, metrics object, children array. */
static size_t check_nodes(const struct fp_json_value *node)
{
	const struct fp_json_value *frame = fp_json_get(node, "frame");
	const struct fp_json_value *kids = fp_json_get(node, "children");
	size_t i, n = 1;

	ASSERT_EQ(fp_json_type(frame), FP_JSON_OBJECT);
	ASSERT_EQ(fp_json_type(fp_json_get(frame, "name")), FP_JSON_STRING);
	ASSERT_STREQ(fp_json_string(fp_json_get(frame, "type"), NULL), "function");
	ASSERT_EQ(fp_json_type(fp_json_get(node, "metrics")), FP_JSON_OBJECT);
	ASSERT_EQ(fp_json_type(kids), FP_JSON_ARRAY);
	for (i = 0; i < fp_json_len(kids); i++) {
		if (i > 0) {
			const char *a = fp_json_string(
				fp_json_get(fp_json_get(fp_json_at(kids, i - 1), "frame"), "name"),
				NULL);
			const char *b = fp_json_string(
				fp_json_get(fp_json_get(fp_json_at(kids, i), "frame"), "name"),
				NULL);

			ASSERT_LT(strcmp(a, b), 0); /* sorted by name */
		}
		n += check_nodes(fp_json_at(kids, i));
	}
	return n;
}

TEST(prof_hatchet_write_shape)
{
	struct fp_calltree *t = sample_tree();
	struct fp_json_doc *doc;
	const struct fp_json_value *top, *root, *rm, *k, *dev;
	char *text = to_json(t, 0);
	double d;
	int64_t i;

	ASSERT_OK(fp_json_parse(text, strlen(text), NULL, &doc, NULL));
	top = fp_json_root(doc);
	ASSERT_EQ(fp_json_type(top), FP_JSON_ARRAY);
	ASSERT_EQ(fp_json_len(top), 2);
	root = fp_json_at(top, 0);
	ASSERT_STREQ(fp_json_string(fp_json_get(fp_json_get(root, "frame"), "name"), NULL), "ROOT");
	ASSERT_EQ(check_nodes(root), fp_calltree_node_count(t));

	/* The root lists every summable metric with its own value (0), no properties. */
	rm = fp_json_get(root, "metrics");
	ASSERT(fp_json_int64(fp_json_get(rm, "time (ns)"), &i) && i == 0);
	ASSERT(fp_json_int64(fp_json_get(rm, "count"), &i) && i == 0);
	ASSERT(fp_json_int64(fp_json_get(rm, "flops16"), &i) && i == 0);
	ASSERT(fp_json_int64(fp_json_get(rm, "bytes"), &i) && i == 0);
	ASSERT(fp_json_int64(fp_json_get(rm, "cpu_time (ns)(exc)"), &i) && i == 0);
	ASSERT_NULL(fp_json_get(rm, "lat (min)")); /* no hint for a min: 0 would be a value */
	ASSERT_NULL(fp_json_get(rm, "device_id"));
	ASSERT_NULL(fp_json_get(rm, "tag (pty)"));

	/* A kernel node: own values, integers as integers, device id as a string. */
	k = child_named(child_named(root, "main.py:run@10"), "matmul_kernel");
	ASSERT_NOT_NULL(k);
	rm = fp_json_get(k, "metrics");
	ASSERT(fp_json_int64(fp_json_get(rm, "time (ns)"), &i) && i == 183000);
	ASSERT(strstr(text, "\"time (ns)\":183000") != NULL);
	ASSERT(fp_json_number(fp_json_get(rm, "bytes"), &d) && d == 0.25);
	ASSERT(fp_json_number(fp_json_get(rm, "flops16"), &d) && d == 1.5e12);
	ASSERT_STREQ(fp_json_string(fp_json_get(rm, "device_id"), NULL), "0");
	ASSERT_STREQ(fp_json_string(fp_json_get(rm, "device_type"), NULL), "CUDA");
	/* Metrics in name order inside the object. */
	{
		const char *key;

		fp_json_member(rm, 0, &key, NULL);
		ASSERT_STREQ(key, "bytes");
		fp_json_member(rm, 5, &key, NULL);
		ASSERT_STREQ(key, "time (ns)");
	}
	/* A scope node (no values of its own) has an empty metrics object. */
	ASSERT_EQ(fp_json_len(fp_json_get(child_named(root, "step"), "metrics")), 0);

	dev = fp_json_at(top, 1);
	ASSERT_STREQ(fp_json_string(fp_json_get(fp_json_get(fp_json_get(dev, "CUDA"), "0"), "arch"),
				    NULL),
		     "90");
	ASSERT(fp_json_int64(fp_json_get(fp_json_get(fp_json_get(dev, "CUDA"), "0"), "num_sms"),
			     &i) &&
	       i == 132);
	fp_json_doc_free(doc);
	fp_free(text);
	fp_calltree_free(t);
}

TEST(prof_hatchet_roundtrip)
{
	struct fp_calltree *t = sample_tree(), *r = NULL, *r2 = NULL;
	struct fp_hatchet_info info;
	struct fp_diag why;
	char *a = to_json(t, 0), *b, *c;
	uint32_t m;
	struct fp_calltree_value v;

	ASSERT_OK(
		fp_calltree_parse_hatchet(a, strlen(a), NULL, FP_HATCHET_STRICT, &r, &info, NULL));
	ASSERT_EQ(info.nodes, fp_calltree_node_count(t));
	ASSERT(info.has_device_info);
	ASSERT_EQ(info.skipped_metrics, 0);
	fp_diag_clear(&why);
	if (!fp_calltree_equal(t, r, 0, &why))
		fpt_fail(__FILE__, __LINE__, "round trip differs: %s", why.msg);
	/* Kinds survive through the naming rule. */
	{
		enum fp_metric_kind kind;

		ASSERT_OK(fp_calltree_metric_find(r, "cpu_time (ns)(exc)", 18, &m));
		ASSERT_NOT_NULL(fp_calltree_metric_name(r, m, NULL, &kind));
		ASSERT_EQ(kind, FP_METRIC_EXCLUSIVE);
	}
	/* Totals are recomputed on read. */
	ASSERT_OK(fp_calltree_metric_find(r, "time (ns)", 9, &m));
	ASSERT_OK(fp_calltree_get(r, FP_CALLTREE_ROOT, m, &v));
	ASSERT_DEQ(v.total, 184007);

	/* Deterministic: writing the read tree gives the same bytes; pretty differs only in form. */
	b = to_json(r, 0);
	ASSERT_STREQ(a, b);
	c = to_json(r, FP_JSONW_PRETTY);
	ASSERT_OK(
		fp_calltree_parse_hatchet(c, strlen(c), NULL, FP_HATCHET_STRICT, &r2, NULL, NULL));
	ASSERT(fp_calltree_equal(t, r2, 0, NULL));

	/* A changed value is found and named. */
	ASSERT_OK(fp_calltree_add_metric(r2, fp_calltree_node_first_child(r2, FP_CALLTREE_ROOT), m,
					 1));
	ASSERT(!fp_calltree_equal(t, r2, 0, &why));
	ASSERT(strstr(why.msg, "time (ns)") != NULL);
	fp_free(a);
	fp_free(b);
	fp_free(c);
	fp_calltree_free(t);
	fp_calltree_free(r);
	fp_calltree_free(r2);
}

/* A Proton-style file, written by hand in Proton's layout. */
static const char proton_file[] =
	"[{\"children\": [{\"children\": [{\"children\": [], \"frame\": {\"name\": \"kern\", "
	"\"type\": \"function\"}, \"metrics\": {\"count\": 10, \"device_id\": \"1\", "
	"\"device_type\": \"CUDA\", \"time (ns)\": 204800, \"flops8\": 1e11, \"bytes\": 1e8}}], "
	"\"frame\": {\"name\": \"/x/test.py:foo@12\", \"type\": \"function\"}, \"metrics\": {}}, "
	"{\"children\": [], \"frame\": {\"name\": \"__proton_launch_metadata\", \"type\": "
	"\"function\"}, \"metrics\": {}}], "
	"\"frame\": {\"name\": \"ROOT\", \"type\": \"function\"}, \"metrics\": {\"count\": 0, "
	"\"time (ns)\": 0, \"flops8\": 0, \"bytes\": 0}}, "
	"{\"CUDA\": {\"1\": {\"arch\": \"90\", \"bus_width\": 6144, \"clock_rate\": 1980000, "
	"\"memory_clock_rate\": 2619000, \"num_sms\": 132}}}]";

TEST(prof_hatchet_proton)
{
	struct fp_calltree *t = NULL;
	struct fp_hatchet_info info;
	struct fp_calltree_value v;
	uint32_t m, n, f;

	ASSERT_OK(fp_calltree_parse_hatchet(proton_file, strlen(proton_file), NULL,
					    FP_HATCHET_STRICT, &t, &info, NULL));
	ASSERT_EQ(info.nodes, 4);
	ASSERT_EQ(fp_calltree_node_count(t), 4);
	ASSERT_OK(fp_calltree_intern(t, "/x/test.py:foo@12", 17, &f));
	ASSERT_OK(fp_calltree_child_find(t, FP_CALLTREE_ROOT, f, &n));
	ASSERT_OK(fp_calltree_intern(t, "kern", 4, &f));
	ASSERT_OK(fp_calltree_child_find(t, n, f, &n));
	ASSERT_OK(fp_calltree_metric_find(t, "time (ns)", 9, &m));
	ASSERT_OK(fp_calltree_get(t, n, m, &v));
	ASSERT_DEQ(v.self, 204800);
	ASSERT_OK(fp_calltree_get(t, FP_CALLTREE_ROOT, m, &v));
	ASSERT_DEQ(v.total, 204800);
	ASSERT_OK(fp_calltree_metric_find(t, "device_id", 9, &m));
	ASSERT_OK(fp_calltree_get(t, n, m, &v));
	ASSERT(v.is_string);
	ASSERT_STREQ(v.str, "1");
	ASSERT_EQ(v.kind, FP_METRIC_PROPERTY);
	ASSERT_EQ(fp_calltree_device_count(t), 5);
	fp_calltree_free(t);
}

TEST(prof_hatchet_tolerant)
{
	static const char text[] =
		"[{\"frame\": {\"name\": \"R\"}, \"metrics\": {\"t\": 1, \"odd\": null, "
		"\"flag\": true, \"list\": [1], \"_hatchet_nid\": 0}, \"extra\": 5, \"children\": ["
		"{\"frame\": {\"type\": \"function\"}, \"name\": \"a\", \"metrics\": {\"t\": 2}},"
		"{\"frame\": {\"name\": \"a\"}, \"metrics\": {\"t\": 3, \"s\": \"x\"}},"
		"{\"frame\": {\"name\": \"b\"}, \"metrics\": {\"s\": 4, \"t\": \"str\"}}]}]";
	struct fp_calltree *t = NULL;
	struct fp_hatchet_info info;
	struct fp_calltree_value v;
	uint32_t m, f, a;

	ASSERT_OK(fp_calltree_parse_hatchet(text, strlen(text), NULL, FP_HATCHET_STRICT, &t, &info,
					    NULL));
	ASSERT_STREQ(fp_calltree_node_name(t, FP_CALLTREE_ROOT, NULL), "R");
	ASSERT_EQ(info.nodes, 4);
	ASSERT_EQ(info.merged_siblings, 1);
	/* null, true, [1], _hatchet_nid, and the strings of "t" and "s", which also carry numbers
	 * (so they stay summable, whichever node comes first). */
	ASSERT_EQ(info.skipped_metrics, 6);
	ASSERT(!info.has_device_info);
	ASSERT_EQ(fp_calltree_node_count(t), 3);
	ASSERT_OK(fp_calltree_intern(t, "a", 1, &f));
	ASSERT_OK(fp_calltree_child_find(t, FP_CALLTREE_ROOT, f, &a));
	ASSERT_OK(fp_calltree_metric_find(t, "t", 1, &m));
	ASSERT_OK(fp_calltree_get(t, a, m, &v));
	ASSERT_DEQ(v.self, 5); /* the two "a" siblings merged */
	fp_calltree_free(t);
}

struct bad_case {
	const char *text;
	int status;
	uint32_t line, col;
	const char *msg;
};

TEST(prof_hatchet_errors)
{
	static const struct bad_case cases[] = {
		{"{}", FP_EFORMAT, 1, 1, "top level at line 1 col 1: expected an array"},
		{"[]", FP_EFORMAT, 1, 1, "the array is empty"},
		{"[1]", FP_EFORMAT, 1, 2,
		 "node at line 1 col 2: a node must be an object, not a number"},
		{"[{\"metrics\": {}}]", FP_EFORMAT, 1, 2, "'frame' is required"},
		{"[\n {\"frame\": [], \"metrics\": {}}]", FP_EFORMAT, 2, 12,
		 "node at line 2 col 12: 'frame' must be an object"},
		{"[{\"frame\": {}, \"metrics\": {}}]", FP_EFORMAT, 1, 12,
		 "'frame' must not be empty"},
		{"[{\"frame\": {\"type\": \"f\"}, \"metrics\": {}}]", FP_EFORMAT, 1, 12,
		 "'frame' has no 'name'"},
		{"[{\"frame\": {\"name\": 3}, \"metrics\": {}}]", FP_EFORMAT, 1, 21,
		 "frame 'name' must be a string, not a number"},
		{"[{\"frame\": {\"name\": \"R\"}}]", FP_EFORMAT, 1, 2, "'metrics' is required"},
		{"[{\"frame\": {\"name\": \"R\"}, \"metrics\": []}]", FP_EFORMAT, 1, 38,
		 "'metrics' must be an object, not an array"},
		{"[{\"frame\": {\"name\": \"R\"}, \"metrics\": {}, \"children\": {}}]", FP_EFORMAT,
		 1, 54, "'children' must be an array, not an object"},
		{"[{\"frame\": {\"name\": \"R\"}, \"metrics\": {},\n \"children\": [\"x\"]}]",
		 FP_EFORMAT, 2, 15,
		 "node at line 2 col 15: a node must be an object, not a string"},
		{"[{\"frame\": {\"name\": \"R\"}, \"metrics\": {}, \"children\": [{\"frame\": {\"name\": "
		 "\"a\"}, \"metrics\": {}, \"children\": [{\"frame\": 1, \"metrics\": {}}]}]}]",
		 FP_EFORMAT, 1, 118, "'frame' must be an object, not a number"},
		{"[{\"frame\": {\"name\": \"R\"}, \"metrics\": {}}, {\"frame\": {\"name\": \"S\"}, "
		 "\"metrics\": {}}]",
		 FP_EFORMAT, 1, 43, "second root node"},
		{"[{\"frame\": {\"name\": \"R\"}, \"metrics\": {}}, 7]", FP_EFORMAT, 1, 43,
		 "device info at line 1 col 43: element [1] must be an object"},
		{"[{\"frame\": {\"name\": \"R\"}, \"metrics\": {}}, {\"CUDA\": 1}]", FP_EFORMAT, 1,
		 52, "'CUDA' must be an object"},
		{"[{\"frame\": {\"name\": \"R\"}, \"metrics\": {}}, {\"CUDA\": {\"0\": 2}}]",
		 FP_EFORMAT, 1, 58, "'CUDA' device '0' must be an object"},
		{"[{\"frame\": {\"name\": \"R\"}, \"metrics\": {}}, {}, {}]", FP_EFORMAT, 1, 47,
		 "unexpected element [2]"},
		/* Truncated and not JSON at all: the JSON reader's position. */
		{"[{\"frame\": {\"name\": \"R\"}, \"metr", FP_EFORMAT, 1, 32, NULL},
		{"\x7f"
		 "ELF",
		 FP_EFORMAT, 1, 1, NULL},
		{"", FP_EFORMAT, 1, 1, NULL},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad_case *c = &cases[i];
		struct fp_calltree *t = (struct fp_calltree *)&cases; /* must stay untouched */
		struct fp_diag d;
		int rc;

		fp_diag_clear(&d);
		rc = fp_calltree_parse_hatchet(c->text, strlen(c->text), NULL, FP_HATCHET_STRICT,
					       &t, NULL, &d);
		if (rc != c->status || d.line != c->line || d.col != c->col ||
		    (c->msg && !strstr(d.msg, c->msg)) || t != (struct fp_calltree *)&cases)
			fpt_fail(
				__FILE__, __LINE__,
				"case %zu: status %d line %u col %u msg \"%s\"; want %d %u:%u \"%s\"",
				i, rc, d.line, d.col, d.msg, c->status, c->line, c->col,
				c->msg ? c->msg : "");
	}
}

TEST(prof_hatchet_depth_limit)
{
	struct fp_calltree_limits lim = {.max_depth = 5};
	struct fp_strbuf sb;
	struct fp_calltree *t = NULL;
	struct fp_diag d;
	int i, rc;

	/* 7 nested nodes below the root: over the tree's depth limit. */
	fp_strbuf_init(&sb, 0);
	ASSERT_OK(fp_strbuf_addstr(&sb, "["));
	for (i = 0; i < 8; i++)
		ASSERT_OK(fp_strbuf_addf(&sb,
					 "{\"frame\": {\"name\": \"n%d\"}, \"metrics\": {}, "
					 "\"children\": [",
					 i));
	for (i = 0; i < 8; i++)
		ASSERT_OK(fp_strbuf_addstr(&sb, "]}"));
	ASSERT_OK(fp_strbuf_addstr(&sb, "]"));
	rc = fp_calltree_parse_hatchet(sb.buf, sb.len, &lim, FP_HATCHET_STRICT, &t, NULL, &d);
	ASSERT_EQ(rc, FP_ELIMIT);
	ASSERT_NULL(t);
	ASSERT_GT(d.line, 0);
	/* Within the default limit it reads. */
	ASSERT_OK(
		fp_calltree_parse_hatchet(sb.buf, sb.len, NULL, FP_HATCHET_STRICT, &t, NULL, NULL));
	ASSERT_EQ(fp_calltree_node_count(t), 8);
	fp_calltree_free(t);
	fp_strbuf_release(&sb);
}

TEST(prof_hatchet_file)
{
	char dir[] = "/tmp/fp-prof-hatchet-XXXXXX", path[256], missing[256];
	struct fp_calltree *t = sample_tree(), *r = NULL;
	struct fp_diag d;
	FILE *f;

	ASSERT_NOT_NULL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/p.hatchet", dir);
	snprintf(missing, sizeof(missing), "%s/none.hatchet", dir);
	ASSERT_OK(fp_calltree_save_hatchet(t, path, 0, NULL));
	ASSERT_OK(fp_calltree_read_hatchet(path, NULL, &r, NULL, NULL));
	ASSERT(fp_calltree_equal(t, r, 0, NULL));
	fp_calltree_free(r);
	r = NULL;

	ASSERT_EQ(fp_calltree_read_hatchet(missing, NULL, &r, NULL, &d), FP_EIO);
	ASSERT(strstr(d.msg, "none.hatchet") != NULL);

	f = fopen(path, "w");
	ASSERT_NOT_NULL(f);
	fputs("[\n  {\"frame\": {\"name\": \"R\"}, \"metrics\": {},\n   \"children\": [{\"frame\": "
	      "\"x\", \"metrics\": {}}]}]\n",
	      f);
	fclose(f);
	ASSERT_EQ(fp_calltree_read_hatchet(path, NULL, &r, NULL, &d), FP_EFORMAT);
	ASSERT(strstr(d.msg, "p.hatchet: node at line 3 col 27: 'frame' must be an object") !=
	       NULL);
	ASSERT_EQ(d.line, 3);
	ASSERT_EQ(d.col, 27);

	ASSERT_EQ(fp_calltree_save_hatchet(t, "/nonexistent/x/y", 0, &d), FP_EIO);
	ASSERT(strstr(d.msg, "/nonexistent/x/y") != NULL);
	unlink(path);
	rmdir(dir);
	fp_calltree_free(t);
}

TEST(prof_hatchet_oom)
{
	struct fp_calltree *t = sample_tree(), *r;
	char *text = to_json(t, 0);
	long n, total;
	int rc;

	fp_calltree_free(t);
	fpt_oom_install(-1);
	r = NULL;
	ASSERT_OK(fp_calltree_parse_hatchet(text, strlen(text), NULL, FP_HATCHET_STRICT, &r, NULL,
					    NULL));
	fp_calltree_free(r);
	total = fpt_oom_count();
	ASSERT_EQ(fpt_oom_live(), 0);
	fpt_oom_uninstall();
	for (n = 0; n < total; n++) {
		struct fp_diag d;

		r = NULL;
		fpt_oom_install(n);
		rc = fp_calltree_parse_hatchet(text, strlen(text), NULL, FP_HATCHET_STRICT, &r,
					       NULL, &d);
		if (rc == FP_OK)
			fp_calltree_free(r);
		else if (rc != FP_ENOMEM || r != NULL)
			fpt_fail(__FILE__, __LINE__, "allocation %ld: status %d (%s)", n, rc,
				 d.msg);
		ASSERT_EQ(fpt_oom_live(), 0);
		fpt_oom_uninstall();
	}
	fp_free(text);
}
