/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The unit-test runner. `fp_unit_tests` runs every test, each in a forked child with a timeout;
 * `fp_unit_tests NAME...` runs the named ones; `--no-fork` runs in-process (for gdb, and under
 * sanitizers that dislike fork). `--list` prints the names (CMake uses it to register tests).
 */
#define _GNU_SOURCE 1
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include <flagprism/alloc.h>
#include <flagprism/calltree.h>
#include <flagprism/json.h>
#include <flagprism/status.h>

#include "test.h"
#include "test-list.h"

#define X(name) void test_##name(void);
FP_TEST_LIST(X)
#undef X

struct test_entry {
	const char *name;
	void (*fn)(void);
};

static const struct test_entry tests[] = {
#define X(name) {#name, test_##name},
	FP_TEST_LIST(X)
#undef X
};

static const char *current_test;

void fpt_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FAIL %s: %s:%d: ", current_test ? current_test : "?", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	exit(1);
}

/* ---- counting allocator for OOM sweeps --------------------------------------------------- */

static long oom_fail_at = -1, oom_count, oom_live;

/* A header in front of each block keeps realloc/free exact without a side table. */
#define OOM_HDR 16

static void *oom_malloc(size_t size)
{
	char *p;

	if (oom_fail_at >= 0 && oom_count++ >= oom_fail_at)
		return NULL;
	if (oom_fail_at < 0)
		oom_count++;
	p = malloc(size + OOM_HDR);
	if (!p)
		return NULL;
	oom_live++;
	return p + OOM_HDR;
}

static void *oom_realloc(void *ptr, size_t size)
{
	char *p;

	if (!ptr)
		return oom_malloc(size);
	if (oom_fail_at >= 0 && oom_count++ >= oom_fail_at)
		return NULL;
	if (oom_fail_at < 0)
		oom_count++;
	p = realloc((char *)ptr - OOM_HDR, size + OOM_HDR);
	return p ? p + OOM_HDR : NULL;
}

static void oom_free(void *ptr)
{
	if (!ptr)
		return;
	oom_live--;
	free((char *)ptr - OOM_HDR);
}

void fpt_oom_install(long fail_at)
{
	oom_fail_at = fail_at;
	oom_count = 0;
	oom_live = 0;
	fp_set_allocator(oom_malloc, oom_realloc, oom_free);
}

void fpt_oom_uninstall(void)
{
	fp_set_allocator(NULL, NULL, NULL);
	oom_fail_at = -1;
}

long fpt_oom_count(void)
{
	return oom_count;
}

long fpt_oom_live(void)
{
	return oom_live;
}

long fpt_oom_sweep(int (*run)(void *arg), void *arg, int also_ok, long min_allocs, long *n_ok)
{
	long n, total, ok = 0;

	fpt_oom_install(-1);
	ASSERT_OK(run(arg));
	total = fpt_oom_count();
	ASSERT_EQ(fpt_oom_live(), 0);
	fpt_oom_uninstall();
	ASSERT_GE(total, min_allocs);
	for (n = 0; n < total; n++) {
		int rc;

		fpt_oom_install(n);
		rc = run(arg);
		if (rc != FP_OK && rc != FP_ENOMEM && (also_ok == 0 || rc != also_ok))
			fpt_fail(__FILE__, __LINE__, "allocation %ld: status %d", n, rc);
		if (fpt_oom_live() != 0)
			fpt_fail(__FILE__, __LINE__, "allocation %ld: %ld blocks leaked", n,
				 fpt_oom_live());
		fpt_oom_uninstall();
		ok += rc == FP_OK;
	}
	if (n_ok)
		*n_ok = ok;
	return total;
}

const char *fpt_data_path(const char *name)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf), "%s/%s", FP_TEST_DATA_DIR, name);
	return buf;
}

static char tmp_dir[64];

const char *fpt_tmp_path(const char *name)
{
	static char buf[4][256];
	static int k;

	if (!tmp_dir[0]) {
		snprintf(tmp_dir, sizeof(tmp_dir), "/tmp/fp-unit-XXXXXX");
		ASSERT_NOT_NULL(mkdtemp(tmp_dir));
	}
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", tmp_dir, name);
	return buf[k];
}

void fpt_tmp_cleanup(void)
{
	char cmd[128];

	if (!tmp_dir[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_dir);
	ASSERT_EQ(system(cmd), 0);
	tmp_dir[0] = '\0';
}

struct fp_json_doc *fpt_json_file(const char *path)
{
	struct fp_json_doc *doc = NULL;
	struct fp_diag d;

	if (fp_json_parse_file(path, NULL, &doc, &d))
		fpt_fail(__FILE__, __LINE__, "%s", d.msg);
	return doc;
}

const char *fpt_metric_str(struct fp_calltree *t, uint32_t node, const char *metric)
{
	struct fp_calltree_value v;
	uint32_t m;

	ASSERT_OK(fp_calltree_metric_find(t, metric, strlen(metric), &m));
	ASSERT_OK(fp_calltree_get(t, node, m, &v));
	ASSERT(v.is_string);
	return v.str;
}

void *fpt_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	long n;

	if (!f)
		fpt_fail(__FILE__, __LINE__, "cannot open %s", path);
	ASSERT_OK(fseek(f, 0, SEEK_END));
	n = ftell(f);
	ASSERT_GT(n, 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	ASSERT_NOT_NULL(buf);
	ASSERT_EQ(fread(buf, 1, (size_t)n, f), n);
	fclose(f);
	buf[n] = 0;
	*len = (size_t)n;
	return buf;
}

/* ---- running ------------------------------------------------------------------------------ */

static int run_forked(const struct test_entry *t, unsigned timeout_s)
{
	pid_t pid;
	int status;

	fflush(stdout);
	fflush(stderr);
	pid = fork();

	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		alarm(timeout_s);
		current_test = t->name;
		t->fn();
		exit(0);
	}
	if (waitpid(pid, &status, 0) < 0)
		return 1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status) != 0;
	fprintf(stderr, "FAIL %s: killed by signal %d%s\n", t->name, WTERMSIG(status),
		WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
	return 1;
}

int main(int argc, char **argv)
{
	int fork_tests = 1, failed = 0, ran = 0, named = 0;
	unsigned timeout_s = 60;
	size_t i;
	int a;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--list")) {
			for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
				printf("%s\n", tests[i].name);
			return 0;
		} else if (!strcmp(argv[a], "--no-fork")) {
			fork_tests = 0;
		} else {
			named++;
		}
	}
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		const struct test_entry *t = &tests[i];
		int want = named == 0, r;

		for (a = 1; a < argc && !want; a++)
			want = !strcmp(argv[a], t->name);
		if (!want)
			continue;
		ran++;
		if (fork_tests) {
			r = run_forked(t, timeout_s);
		} else {
			current_test = t->name;
			t->fn();
			r = 0;
		}
		printf("%s %s\n", r ? "not ok" : "ok", t->name);
		failed += r;
	}
	if (named && ran != named) {
		fprintf(stderr, "unknown test name among the arguments\n");
		return 2;
	}
	printf("%d passed, %d failed\n", ran - failed, failed);
	return failed ? 1 : 0;
}
