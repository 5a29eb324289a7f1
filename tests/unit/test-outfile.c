/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for output files (include/flagprism/outfile.h): regular files replaced through a
 * temporary file (created exclusively, owner-only until renamed, never through a planted name),
 * devices, FIFOs and the process's own descriptors written through and never replaced,
 * symbolic links kept (a stranger's link in a sticky directory refused), refused destinations,
 * errno names in failures, the deadline a signal handler sets and the removal of temporaries,
 * the check before a run, and out-of-memory sweeps. They run as root in CI too: every device written to
 * is checked to still be a device afterwards.
 */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <flagprism/calltree.h>
#include <flagprism/outfile.h>
#include <flagprism/strbuf.h>

#include "test.h"

static char dir[64];

static void make_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/fp-test-outfile-XXXXXX");
	ASSERT_NOT_NULL(mkdtemp(dir));
}

static void remove_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[512];

	ASSERT_NOT_NULL(d);
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	closedir(d);
	ASSERT_OK(rmdir(dir));
}

static int count_entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	ASSERT_NOT_NULL(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void in_dir(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", dir, name);
}

static int write_text(const char *path, const char *text, unsigned flags, struct fp_diag *diag)
{
	struct fp_outfile of;
	int rc = fp_outfile_open(&of, path, flags, diag);

	if (rc)
		return rc;
	fputs(text, of.f);
	return fp_outfile_commit(&of, diag);
}

static void expect_contents(const char *path, const char *text)
{
	size_t len;
	char *got = fpt_slurp(path, &len);

	ASSERT_UEQ(len, strlen(text));
	ASSERT_MEMEQ(got, text, len);
	free(got);
}

TEST(outfile_regular_new_and_replaced)
{
	struct fp_diag diag;
	struct stat st;
	char path[256];

	make_dir();
	in_dir(path, sizeof(path), "a.json");
	ASSERT_OK(write_text(path, "first\n", 0, &diag));
	expect_contents(path, "first\n");
	ASSERT_OK(chmod(path, 0600));
	ASSERT_OK(write_text(path, "second\n", 0, &diag));
	expect_contents(path, "second\n");
	ASSERT_OK(stat(path, &st));
	ASSERT_EQ(st.st_mode & 0777, 0600); /* a replaced file keeps its permissions */
	ASSERT_EQ(count_entries(), 1);      /* no temporary file left */
	remove_dir();
}

TEST(outfile_abort_leaves_the_old_file)
{
	struct fp_outfile of;
	char path[256];

	make_dir();
	in_dir(path, sizeof(path), "keep");
	ASSERT_OK(write_text(path, "old", 0, NULL));
	ASSERT_OK(fp_outfile_open(&of, path, 0, NULL));
	fputs("new and unfinished", of.f);
	ASSERT_EQ(count_entries(), 2); /* the temporary file exists while writing */
	fp_outfile_abort(&of);
	expect_contents(path, "old");
	ASSERT_EQ(count_entries(), 1);
	/* finish() with a writer's error other than a failed write aborts and returns it */
	ASSERT_OK(fp_outfile_open(&of, path, 0, NULL));
	fputs("half", of.f);
	ASSERT_EQ(fp_outfile_finish(&of, FP_EFORMAT, NULL), FP_EFORMAT);
	expect_contents(path, "old");
	ASSERT_EQ(count_entries(), 1);
	remove_dir();
}

TEST(outfile_symlink_target_written_link_kept)
{
	char target[256], link1[256], link2[256], dangling[256], made[256];
	struct stat st;

	make_dir();
	in_dir(target, sizeof(target), "target.hatchet");
	in_dir(link1, sizeof(link1), "link1");
	in_dir(link2, sizeof(link2), "link2");
	ASSERT_OK(write_text(target, "old", 0, NULL));
	ASSERT_OK(symlink("target.hatchet", link1)); /* relative */
	ASSERT_OK(symlink(link1, link2));            /* absolute, a chain of two */
	ASSERT_OK(write_text(link2, "through two links", 0, NULL));
	ASSERT_OK(lstat(link1, &st));
	ASSERT(S_ISLNK(st.st_mode));
	ASSERT_OK(lstat(link2, &st));
	ASSERT(S_ISLNK(st.st_mode));
	expect_contents(target, "through two links");
	/* a dangling link: its target is created, the link stays */
	in_dir(dangling, sizeof(dangling), "dangling");
	in_dir(made, sizeof(made), "made-by-link");
	ASSERT_OK(symlink("made-by-link", dangling));
	ASSERT_OK(write_text(dangling, "new", 0, NULL));
	ASSERT_OK(lstat(dangling, &st));
	ASSERT(S_ISLNK(st.st_mode));
	expect_contents(made, "new");
	ASSERT_EQ(count_entries(), 5);
	remove_dir();
}

TEST(outfile_symlink_loop_refused)
{
	struct fp_diag diag;
	char a[256], b[256];

	make_dir();
	in_dir(a, sizeof(a), "a");
	in_dir(b, sizeof(b), "b");
	ASSERT_OK(symlink(b, a));
	ASSERT_OK(symlink(a, b));
	ASSERT_EQ(write_text(a, "x", 0, &diag), FP_EIO);
	ASSERT_NOT_NULL(strstr(diag.msg, "ELOOP"));
	ASSERT_EQ(count_entries(), 2);
	remove_dir();
}

TEST(outfile_dev_null_written_through)
{
	struct stat before, after;
	struct fp_diag diag;

	ASSERT_OK(stat("/dev/null", &before));
	ASSERT(S_ISCHR(before.st_mode));
	ASSERT_OK(write_text("/dev/null", "nothing to see", 0, &diag));
	ASSERT_OK(stat("/dev/null", &after));
	ASSERT(S_ISCHR(after.st_mode));
	ASSERT_UEQ(after.st_rdev, before.st_rdev);
	ASSERT_UEQ(after.st_ino, before.st_ino);
}

TEST(outfile_dev_full_reports_enospc)
{
	struct fp_outfile of;
	struct fp_diag diag;
	struct stat st;
	int i;

	if (access("/dev/full", W_OK) != 0)
		return; /* no /dev/full in this container: nothing to write to */
	ASSERT_OK(fp_outfile_open(&of, "/dev/full", 0, &diag));
	for (i = 0; i < 10000; i++)
		fputs("0123456789", of.f);
	ASSERT_EQ(fp_outfile_commit(&of, &diag), FP_EIO);
	ASSERT_NOT_NULL(strstr(diag.msg, "/dev/full"));
	ASSERT_NOT_NULL(strstr(diag.msg, "ENOSPC"));
	ASSERT_NOT_NULL(strstr(diag.msg, "cannot write"));
	ASSERT_OK(stat("/dev/full", &st));
	ASSERT(S_ISCHR(st.st_mode));
}

TEST(outfile_fifo_written_through)
{
	char fifo[256], buf[64];
	struct fp_diag diag;
	struct stat st;
	ssize_t n;
	int rfd;

	make_dir();
	in_dir(fifo, sizeof(fifo), "pipe");
	ASSERT_OK(mkfifo(fifo, 0600));
	/* Without a reader: a clear error, never a hang, and the FIFO stays. */
	ASSERT_EQ(write_text(fifo, "x", 0, &diag), FP_EIO);
	ASSERT_NOT_NULL(strstr(diag.msg, "no process is reading"));
	ASSERT_OK(stat(fifo, &st));
	ASSERT(S_ISFIFO(st.st_mode));
	/* With one (this process, non-blocking), the bytes arrive through it. */
	rfd = open(fifo, O_RDONLY | O_NONBLOCK);
	ASSERT_GE(rfd, 0);
	ASSERT_OK(write_text(fifo, "through the pipe", 0, &diag));
	n = read(rfd, buf, sizeof(buf));
	ASSERT_EQ(n, 16);
	ASSERT_MEMEQ(buf, "through the pipe", 16);
	close(rfd);
	ASSERT_OK(stat(fifo, &st));
	ASSERT(S_ISFIFO(st.st_mode));
	ASSERT_EQ(count_entries(), 1);
	remove_dir();
}

/* Run write_text(path) with standard output redirected to a file; return what arrived there. */
static char *capture_stdout(const char *path, unsigned flags, int *rc)
{
	char out[256];
	size_t len;
	int saved, fd;
	char *got;

	in_dir(out, sizeof(out), "stdout.txt");
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT_GE(fd, 0);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	ASSERT_GE(saved, 0);
	ASSERT_GE(dup2(fd, STDOUT_FILENO), 0);
	close(fd);
	*rc = write_text(path, "to stdout\n", flags, NULL);
	ASSERT_GE(dup2(saved, STDOUT_FILENO), 0);
	close(saved);
	if (*rc)
		return NULL;
	got = fpt_slurp(out, &len);
	unlink(out);
	return got;
}

TEST(outfile_dash_and_dev_stdout)
{
	struct stat st;
	char *got;
	int rc;

	make_dir();
	got = capture_stdout("-", FP_OUTFILE_DASH_STDOUT, &rc);
	ASSERT_OK(rc);
	ASSERT_STREQ(got, "to stdout\n");
	free(got);
	got = capture_stdout("/dev/stdout", 0, &rc);
	ASSERT_OK(rc);
	ASSERT_STREQ(got, "to stdout\n");
	free(got);
	/* the redirected file is written, not replaced: standard output still works after */
	got = capture_stdout("/proc/self/fd/1", 0, &rc);
	ASSERT_OK(rc);
	ASSERT_STREQ(got, "to stdout\n");
	free(got);
	ASSERT_OK(lstat("/dev/stdout", &st));
	ASSERT(S_ISLNK(st.st_mode) || S_ISCHR(st.st_mode));
	/* without the flag, "-" is a file called "-" */
	ASSERT_OK(chdir(dir));
	ASSERT_OK(write_text("-", "dash", 0, NULL));
	expect_contents("-", "dash");
	ASSERT_OK(unlink("-"));
	ASSERT_OK(chdir("/"));
	remove_dir();
}

TEST(outfile_refused_destinations)
{
	struct fp_outfile of;
	struct fp_diag diag;

	make_dir();
	ASSERT_EQ(fp_outfile_open(&of, dir, 0, &diag), FP_EINVAL);
	ASSERT_NOT_NULL(strstr(diag.msg, "is a directory"));
	ASSERT_EQ(fp_outfile_open(&of, "", 0, &diag), FP_EINVAL);
	ASSERT_NOT_NULL(strstr(diag.msg, "empty"));
	ASSERT_EQ(fp_outfile_open(&of, NULL, 0, &diag), FP_EINVAL);
	ASSERT_EQ(fp_outfile_open(&of, "/nonexistent-dir-fp/x.json", 0, &diag), FP_EIO);
	ASSERT_NOT_NULL(strstr(diag.msg, "/nonexistent-dir-fp/x.json"));
	ASSERT_NOT_NULL(strstr(diag.msg, "ENOENT"));
	fp_outfile_abort(&of); /* after a failed open: a no-op */
	ASSERT_EQ(count_entries(), 0);
	remove_dir();
}

TEST(outfile_failed_write_names_errno_and_keeps_old)
{
	struct rlimit lim, old;
	struct fp_outfile of;
	struct fp_diag diag;
	char path[256];
	int i;

	make_dir();
	in_dir(path, sizeof(path), "big");
	ASSERT_OK(write_text(path, "old", 0, NULL));
	/* A file size limit makes writes fail with EFBIG, as a full disk fails with ENOSPC. */
	signal(SIGXFSZ, SIG_IGN);
	ASSERT_OK(getrlimit(RLIMIT_FSIZE, &old));
	lim = old;
	lim.rlim_cur = 4096;
	ASSERT_OK(setrlimit(RLIMIT_FSIZE, &lim));
	ASSERT_OK(fp_outfile_open(&of, path, 0, &diag));
	for (i = 0; i < 100000; i++)
		fputs("0123456789", of.f);
	ASSERT_EQ(fp_outfile_commit(&of, &diag), FP_EIO);
	ASSERT_OK(setrlimit(RLIMIT_FSIZE, &old));
	ASSERT_NOT_NULL(strstr(diag.msg, path));
	ASSERT_NOT_NULL(strstr(diag.msg, "EFBIG"));
	expect_contents(path, "old");
	ASSERT_EQ(count_entries(), 1);
	remove_dir();
}

TEST(outfile_long_names_use_a_short_temporary)
{
	char name[300], path[512];
	struct fp_diag diag;

	make_dir();
	memset(name, 'n', 250);
	name[250] = '\0';
	in_dir(path, sizeof(path), name);
	ASSERT_OK(write_text(path, "long", 0, &diag));
	expect_contents(path, "long");
	ASSERT_EQ(count_entries(), 1);
	remove_dir();
}

TEST(outfile_check_before_a_run)
{
	char path[600], name[300];
	struct fp_diag diag;

	make_dir();
	in_dir(path, sizeof(path), "p.hatchet");
	ASSERT_OK(fp_outfile_check(path, &diag));
	ASSERT_EQ(count_entries(), 0); /* the probe is gone */
	ASSERT_OK(fp_outfile_check("/dev/null", &diag));
	ASSERT_OK(fp_outfile_check("/dev/stdout", &diag));
	ASSERT_EQ(fp_outfile_check(dir, &diag), FP_EINVAL);
	ASSERT_NOT_NULL(strstr(diag.msg, "directory"));
	ASSERT_EQ(fp_outfile_check("/nonexistent-dir-fp/p", &diag), FP_EIO);
	ASSERT_NOT_NULL(strstr(diag.msg, "ENOENT"));
	memset(name, 'x', 290);
	name[290] = '\0';
	in_dir(path, sizeof(path), name);
	ASSERT_EQ(fp_outfile_check(path, &diag), FP_EIO);
	ASSERT_NOT_NULL(strstr(diag.msg, "ENAMETOOLONG"));
	ASSERT_EQ(fp_outfile_check("", &diag), FP_EINVAL);
	if (geteuid() != 0) {
		/* Root writes anywhere; for everyone else a read-only directory is refused now. */
		ASSERT_OK(chmod(dir, 0555));
		in_dir(path, sizeof(path), "p");
		ASSERT_EQ(fp_outfile_check(path, &diag), FP_EIO);
		ASSERT_NOT_NULL(strstr(diag.msg, "EACCES"));
		ASSERT_OK(chmod(dir, 0755));
	}
	ASSERT_EQ(count_entries(), 0);
	remove_dir();
}

TEST(outfile_errno_names)
{
	ASSERT_STREQ(fp_errno_name(ENOSPC), "ENOSPC");
	ASSERT_STREQ(fp_errno_name(EROFS), "EROFS");
	ASSERT_STREQ(fp_errno_name(EACCES), "EACCES");
	ASSERT_STREQ(fp_errno_name(99999), "errno 99999");
}

TEST(outfile_calltree_save_dash)
{
	struct fp_calltree *t = fp_calltree_new(NULL);
	char *got;
	int rc;

	ASSERT_NOT_NULL(t);
	make_dir();
	{
		char out[256];
		size_t len;
		int saved, fd;

		in_dir(out, sizeof(out), "o");
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		fflush(stdout);
		saved = dup(STDOUT_FILENO);
		dup2(fd, STDOUT_FILENO);
		close(fd);
		rc = fp_calltree_save_hatchet(t, "-", FP_CALLTREE_SAVE_DASH_STDOUT, NULL);
		dup2(saved, STDOUT_FILENO);
		close(saved);
		ASSERT_OK(rc);
		got = fpt_slurp(out, &len);
		ASSERT_EQ(got[0], '[');
		ASSERT_EQ(got[len - 1], '\n');
		free(got);
	}
	fp_calltree_free(t);
	remove_dir();
}

/* A planted temporary name (a link to a victim) is neither followed nor reused: the writer
 * moves on to the next name, the victim keeps its contents and the link stays. */
TEST(outfile_planted_temporary_names_are_not_followed)
{
	char path[256], victim[256], plant[300];
	struct stat st;
	int k;

	make_dir();
	in_dir(path, sizeof(path), "out.html");
	in_dir(victim, sizeof(victim), "victim.txt");
	ASSERT_OK(write_text(victim, "precious", 0, NULL));
	for (k = 0; k < 10; k++) {
		snprintf(plant, sizeof(plant), "%s.tmp.%ld.%d", path, (long)getpid(), k);
		ASSERT_OK(symlink("victim.txt", plant));
	}
	snprintf(plant, sizeof(plant), "%s.tmp.%ld", path, (long)getpid()); /* the old name */
	ASSERT_OK(symlink("victim.txt", plant));
	ASSERT_OK(write_text(path, "page", 0, NULL));
	expect_contents(path, "page");
	expect_contents(victim, "precious");
	ASSERT_OK(lstat(plant, &st));
	ASSERT(S_ISLNK(st.st_mode));
	ASSERT_EQ(count_entries(), 13); /* out.html, the victim, 11 links */
	remove_dir();
}

/* The temporary file is the owner's alone while it is written; at commit a new file gets
 * 0666 less the umask, a replaced one keeps its mode. */
TEST(outfile_temporary_is_private_until_renamed)
{
	struct fp_outfile of;
	char path[256];
	struct stat st;
	mode_t old = umask(022);

	make_dir();
	in_dir(path, sizeof(path), "new.json");
	ASSERT_OK(fp_outfile_open(&of, path, 0, NULL));
	ASSERT_NOT_NULL(of.tmp);
	ASSERT_OK(stat(of.tmp, &st));
	ASSERT_EQ(st.st_mode & 0777, 0600);
	fputs("x", of.f);
	ASSERT_OK(fp_outfile_commit(&of, NULL));
	ASSERT_OK(stat(path, &st));
	ASSERT_EQ(st.st_mode & 0777, 0644);
	umask(077);
	in_dir(path, sizeof(path), "private.json");
	ASSERT_OK(write_text(path, "y", 0, NULL));
	ASSERT_OK(stat(path, &st));
	ASSERT_EQ(st.st_mode & 0777, 0600);
	umask(old);
	remove_dir();
}

/* A link in a sticky, world-writable directory that belongs to another user is not followed
 * (as protected_symlinks refuses it); the caller's own link there is. Needs root to give a link
 * another owner. */
TEST(outfile_strangers_link_in_sticky_dir_refused)
{
	char link[256], target[256];
	struct fp_diag diag;
	struct stat st;

	if (geteuid() != 0)
		return; /* only root can make a link owned by someone else */
	make_dir();
	ASSERT_OK(chmod(dir, 01777));
	in_dir(link, sizeof(link), "report.html");
	in_dir(target, sizeof(target), "victim");
	ASSERT_OK(write_text(target, "precious", 0, NULL));
	ASSERT_OK(symlink("victim", link));
	ASSERT_OK(lchown(link, 12345, 12345));
	ASSERT_EQ(write_text(link, "page", 0, &diag), FP_EINVAL);
	ASSERT_NOT_NULL(strstr(diag.msg, "refusing to follow it"));
	ASSERT_EQ(fp_outfile_check(link, &diag), FP_EINVAL);
	expect_contents(target, "precious");
	ASSERT_OK(lstat(link, &st));
	ASSERT(S_ISLNK(st.st_mode));
	ASSERT_OK(lchown(link, 0, 0));
	ASSERT_OK(write_text(link, "page", 0, &diag));
	expect_contents(target, "page");
	ASSERT_OK(chmod(dir, 0700));
	remove_dir();
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A FIFO whose reader stops reading cannot hold the writer past the deadline of
 * fp_outfile_interrupt(); after it nothing is opened, until the deadline is reset. */
TEST(outfile_interrupt_ends_a_stalled_write)
{
	char fifo[256], path[256];
	struct fp_outfile of;
	struct fp_diag diag;
	double t0;
	int rfd, i;

	make_dir();
	in_dir(fifo, sizeof(fifo), "pipe");
	ASSERT_OK(mkfifo(fifo, 0600));
	rfd = open(fifo, O_RDONLY | O_NONBLOCK); /* a reader that never reads */
	ASSERT_GE(rfd, 0);
	ASSERT_OK(fp_outfile_open(&of, fifo, 0, &diag));
	t0 = now_s();
	fp_outfile_interrupt(300);
	fp_outfile_interrupt(60000); /* the first deadline stays */
	for (i = 0; i < 100000; i++)
		fputs("0123456789", of.f);
	ASSERT_EQ(fp_outfile_commit(&of, &diag), FP_EIO);
	ASSERT(now_s() - t0 < 2.0);
	ASSERT_NOT_NULL(strstr(diag.msg, "a signal ended the writing (EINTR)"));
	in_dir(path, sizeof(path), "late.json");
	ASSERT_EQ(write_text(path, "late", 0, &diag), FP_EIO);
	ASSERT_NOT_NULL(strstr(diag.msg, "EINTR"));
	fp_outfile_interrupt_reset();
	ASSERT_OK(write_text(path, "on time", 0, &diag));
	expect_contents(path, "on time");
	close(rfd);
	ASSERT_EQ(count_entries(), 2);
	remove_dir();
}

/* What a signal handler calls before the process ends: the temporary files go, the old
 * contents stay. */
TEST(outfile_remove_temporaries)
{
	struct fp_outfile of;
	struct fp_diag diag;
	char path[256];

	make_dir();
	in_dir(path, sizeof(path), "kept");
	ASSERT_OK(write_text(path, "old", 0, NULL));
	ASSERT_OK(fp_outfile_open(&of, path, 0, NULL));
	fputs("half", of.f);
	ASSERT_EQ(count_entries(), 2);
	fp_outfile_remove_temporaries();
	ASSERT_EQ(count_entries(), 1);
	ASSERT_EQ(fp_outfile_commit(&of, &diag), FP_EIO);
	expect_contents(path, "old");
	fp_outfile_remove_temporaries(); /* nothing left to remove */
	expect_contents(path, "old");
	remove_dir();
}

static int oom_open_commit(void *arg)
{
	const char *path = arg;
	struct fp_outfile of;
	int rc = fp_outfile_open(&of, path, 0, NULL);

	if (rc)
		return rc;
	fputs("x", of.f);
	return fp_outfile_commit(&of, NULL);
}

static int oom_check(void *arg)
{
	return fp_outfile_check(arg, NULL);
}

TEST(outfile_oom)
{
	char path[256], link[256];

	make_dir();
	in_dir(path, sizeof(path), "oom");
	in_dir(link, sizeof(link), "oom-link");
	ASSERT_OK(symlink("oom", link));
	fpt_oom_sweep(oom_open_commit, link, 0, 2, NULL);
	fpt_oom_sweep(oom_check, link, 0, 2, NULL);
	ASSERT_EQ(count_entries(), 2);
	remove_dir();
}
