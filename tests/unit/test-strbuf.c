/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for the capped growable buffer: growth, cap, formatting, detach, files (FIFOs and
 * pipes never waited on without a writer, sidecars regular files only), OOM. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include <flagprism/alloc.h>
#include <flagprism/strbuf.h>

#include "test.h"

static void tmp_path(char *buf, size_t size, const char *tag)
{
	snprintf(buf, size, "/tmp/fp-test-strbuf-%ld-%s", (long)getpid(), tag);
}

TEST(strbuf_init_empty)
{
	struct fp_strbuf sb;

	fp_strbuf_init(&sb, 0);
	ASSERT_NOT_NULL(sb.buf);
	ASSERT_STREQ(sb.buf, "");
	ASSERT_UEQ(sb.len, 0);
	ASSERT_UEQ(sb.alloc, 0);
	ASSERT_UEQ(sb.cap, FP_STRBUF_DEFAULT_CAP);
	fp_strbuf_reset(&sb); /* must not write to the shared empty string */
	ASSERT_OK(fp_strbuf_add(&sb, "", 0));
	ASSERT_OK(fp_strbuf_add(&sb, NULL, 0)); /* zero bytes from nowhere is fine */
	ASSERT_UEQ(sb.alloc, 0);
	ASSERT_OK(fp_strbuf_addch(&sb, 'x'));
	ASSERT_OK(fp_strbuf_add(&sb, NULL, 0)); /* also with memory allocated */
	ASSERT_STREQ(sb.buf, "x");
	fp_strbuf_reset(&sb);
	fp_strbuf_release(&sb);
	ASSERT_STREQ(sb.buf, "");
	fp_strbuf_init(&sb, 7);
	ASSERT_UEQ(sb.cap, 7);
	fp_strbuf_release(&sb);
	ASSERT_UEQ(sb.cap, 7);
}

TEST(strbuf_append)
{
	struct fp_strbuf sb;
	char big[1000];
	size_t i;

	fp_strbuf_init(&sb, 0);
	ASSERT_OK(fp_strbuf_addstr(&sb, "hello"));
	ASSERT_OK(fp_strbuf_addch(&sb, ' '));
	ASSERT_OK(fp_strbuf_add(&sb, "world!!", 5));
	ASSERT_STREQ(sb.buf, "hello world");
	ASSERT_UEQ(sb.len, 11);
	ASSERT(sb.alloc > sb.len);
	ASSERT_OK(fp_strbuf_addf(&sb, " %d-%s", 42, "x"));
	ASSERT_STREQ(sb.buf, "hello world 42-x");
	/* NUL bytes are contents too */
	ASSERT_OK(fp_strbuf_add(&sb, "a\0b", 3));
	ASSERT_UEQ(sb.len, 19);
	ASSERT_MEMEQ(sb.buf + 16, "a\0b", 4);
	ASSERT_OK(fp_strbuf_addch(&sb, 0x1ff)); /* converted to unsigned char */
	ASSERT_EQ((unsigned char)sb.buf[19], 0xff);
	fp_strbuf_reset(&sb);
	ASSERT_UEQ(sb.len, 0);
	ASSERT_STREQ(sb.buf, "");
	/* formatted output longer than the free space, twice */
	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	for (i = 0; i < 2; i++)
		ASSERT_OK(fp_strbuf_addf(&sb, "<%s>", big));
	ASSERT_UEQ(sb.len, 2 * (sizeof(big) + 1));
	ASSERT_EQ(sb.buf[0], '<');
	ASSERT_EQ(sb.buf[sizeof(big)], '>');
	ASSERT_EQ(sb.buf[sb.len], '\0');
	ASSERT_UEQ(strlen(sb.buf), sb.len);
	fp_strbuf_release(&sb);
}

TEST(strbuf_cap)
{
	struct fp_strbuf sb;

	fp_strbuf_init(&sb, 10);
	ASSERT_OK(fp_strbuf_add(&sb, "0123456789", 10));
	ASSERT_EQ(fp_strbuf_addch(&sb, 'x'), FP_ELIMIT);
	ASSERT_EQ(fp_strbuf_add(&sb, "x", 1), FP_ELIMIT);
	ASSERT_EQ(fp_strbuf_addf(&sb, "%d", 1), FP_ELIMIT);
	ASSERT_STREQ(sb.buf, "0123456789");
	ASSERT(sb.alloc <= 11);
	ASSERT_EQ(fp_strbuf_grow(&sb, SIZE_MAX), FP_ELIMIT);
	ASSERT_OK(fp_strbuf_grow(&sb, 0));
	/* a failed addf must leave the terminator in place */
	sb.len = 5;
	sb.buf[5] = '\0';
	ASSERT_EQ(fp_strbuf_addf(&sb, "%s", "abcdefgh"), FP_ELIMIT);
	ASSERT_STREQ(sb.buf, "01234");
	ASSERT_OK(fp_strbuf_addf(&sb, "%s", "abcde"));
	ASSERT_STREQ(sb.buf, "01234abcde");
	fp_strbuf_release(&sb);

	/* the cap also bounds a buffer that never allocated */
	fp_strbuf_init(&sb, 3);
	ASSERT_EQ(fp_strbuf_add(&sb, "abcd", 4), FP_ELIMIT);
	ASSERT_UEQ(sb.alloc, 0);
	ASSERT_OK(fp_strbuf_add(&sb, "abc", 3));
	ASSERT_UEQ(sb.alloc, 4);
	fp_strbuf_release(&sb);
}

TEST(strbuf_growth_geometric)
{
	struct fp_strbuf sb;
	long i;

	/* 1M single-byte appends must cost a logarithmic number of reallocations */
	fpt_oom_install(-1);
	fp_strbuf_init(&sb, 0);
	for (i = 0; i < 1000000; i++)
		ASSERT_OK(fp_strbuf_addch(&sb, 'a' + (int)(i % 26)));
	ASSERT_UEQ(sb.len, 1000000);
	ASSERT(fpt_oom_count() < 40);
	ASSERT_EQ(sb.buf[999999], 'a' + 999999 % 26);
	fp_strbuf_release(&sb);
	ASSERT_EQ(fpt_oom_live(), 0);
	fpt_oom_uninstall();
}

TEST(strbuf_detach)
{
	struct fp_strbuf sb;
	size_t len = 99;
	char *p;

	fp_strbuf_init(&sb, 50);
	p = fp_strbuf_detach(&sb, &len);
	ASSERT_NOT_NULL(p);
	ASSERT_STREQ(p, "");
	ASSERT_UEQ(len, 0);
	fp_free(p);
	ASSERT_OK(fp_strbuf_addstr(&sb, "keep"));
	p = fp_strbuf_detach(&sb, &len);
	ASSERT_STREQ(p, "keep");
	ASSERT_UEQ(len, 4);
	ASSERT_UEQ(sb.len, 0);
	ASSERT_UEQ(sb.alloc, 0);
	ASSERT_UEQ(sb.cap, 50);
	ASSERT_STREQ(sb.buf, "");
	fp_free(p);
	p = fp_strbuf_detach(&sb, NULL);
	fp_free(p);

	fpt_oom_install(0);
	ASSERT_NULL(fp_strbuf_detach(&sb, &len));
	fpt_oom_uninstall();
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int vaddf_helper(struct fp_strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = fp_strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
	return r;
}

TEST(strbuf_vaddf)
{
	struct fp_strbuf sb;
	int i;

	fp_strbuf_init(&sb, 0);
	for (i = 0; i < 100; i++)
		ASSERT_OK(vaddf_helper(&sb, "%03d,", i));
	ASSERT_UEQ(sb.len, 400);
	ASSERT_MEMEQ(sb.buf + 396, "099,", 5);
	fp_strbuf_release(&sb);
}

TEST(strbuf_files)
{
	struct fp_strbuf sb, rd;
	struct fp_diag d;
	char path[256];
	size_t i;

	tmp_path(path, sizeof(path), "files");
	fp_strbuf_init(&sb, 0);
	for (i = 0; i < 200000; i++)
		ASSERT_OK(fp_strbuf_addch(&sb, (int)(i * 7 % 256)));
	ASSERT_OK(fp_strbuf_write_file(&sb, path, &d));

	/* appends to what is there */
	fp_strbuf_init(&rd, 0);
	ASSERT_OK(fp_strbuf_addstr(&rd, "pre"));
	ASSERT_OK(fp_strbuf_read_file(&rd, path, &d));
	ASSERT_UEQ(rd.len, 3 + sb.len);
	ASSERT_MEMEQ(rd.buf, "pre", 3);
	ASSERT_MEMEQ(rd.buf + 3, sb.buf, sb.len);
	ASSERT_EQ(rd.buf[rd.len], '\0');
	fp_strbuf_release(&rd);

	/* over the cap: FP_ELIMIT, and the old contents stay */
	fp_strbuf_init(&rd, 1000);
	ASSERT_OK(fp_strbuf_addstr(&rd, "old"));
	fp_diag_clear(&d);
	ASSERT_EQ(fp_strbuf_read_file(&rd, path, &d), FP_ELIMIT);
	ASSERT_EQ(d.status, FP_ELIMIT);
	ASSERT_NOT_NULL(strstr(d.msg, path));
	ASSERT_STREQ(rd.buf, "old");
	ASSERT_UEQ(rd.len, 3);
	fp_strbuf_release(&rd);

	/* exactly at the cap is fine */
	fp_strbuf_init(&rd, sb.len);
	ASSERT_OK(fp_strbuf_read_file(&rd, path, &d));
	ASSERT_UEQ(rd.len, sb.len);
	fp_strbuf_release(&rd);

	/* overwrite with a smaller file */
	fp_strbuf_reset(&sb);
	ASSERT_OK(fp_strbuf_addstr(&sb, "short"));
	ASSERT_OK(fp_strbuf_write_file(&sb, path, NULL));
	fp_strbuf_init(&rd, 0);
	ASSERT_OK(fp_strbuf_read_file(&rd, path, NULL));
	ASSERT_STREQ(rd.buf, "short");
	fp_strbuf_release(&rd);

	/* an empty file */
	fp_strbuf_reset(&sb);
	ASSERT_OK(fp_strbuf_write_file(&sb, path, NULL));
	fp_strbuf_init(&rd, 0);
	ASSERT_OK(fp_strbuf_read_file(&rd, path, NULL));
	ASSERT_UEQ(rd.len, 0);
	ASSERT_STREQ(rd.buf, "");
	fp_strbuf_release(&rd);

	ASSERT_EQ(unlink(path), 0);
	fp_strbuf_release(&sb);
}

TEST(strbuf_file_errors)
{
	struct fp_strbuf sb;
	struct fp_diag d;

	fp_strbuf_init(&sb, 0);
	fp_diag_clear(&d);
	ASSERT_EQ(fp_strbuf_read_file(&sb, "/nonexistent/fp-x", &d), FP_EIO);
	ASSERT_EQ(d.status, FP_EIO);
	ASSERT_NOT_NULL(strstr(d.msg, "/nonexistent/fp-x"));
	ASSERT_UEQ(sb.len, 0);
	/* a directory opens but cannot be read */
	ASSERT_EQ(fp_strbuf_read_file(&sb, "/tmp", &d), FP_EIO);
	ASSERT_UEQ(sb.len, 0);
	ASSERT_OK(fp_strbuf_addstr(&sb, "x"));
	fp_diag_clear(&d);
	ASSERT_EQ(fp_strbuf_write_file(&sb, "/nonexistent/dir/out", &d), FP_EIO);
	ASSERT_NOT_NULL(strstr(d.msg, "/nonexistent/dir/out"));
	fp_strbuf_release(&sb);
}

TEST(strbuf_read_proc)
{
	struct fp_strbuf sb;

	/* /proc files report size 0: the chunked path must read them whole */
	fp_strbuf_init(&sb, 0);
	ASSERT_OK(fp_strbuf_read_file(&sb, "/proc/self/status", NULL));
	ASSERT(sb.len > 0);
	ASSERT_NOT_NULL(strstr(sb.buf, "Pid:"));
	fp_strbuf_release(&sb);
	/* and respect the cap */
	fp_strbuf_init(&sb, 10);
	ASSERT_EQ(fp_strbuf_read_file(&sb, "/proc/self/status", NULL), FP_ELIMIT);
	ASSERT_UEQ(sb.len, 0);
	fp_strbuf_release(&sb);
}

/* A FIFO nobody writes to is refused at once (the open does not wait for a writer); one with a
 * writer is read to its end; a sidecar read refuses a FIFO before reading. */
TEST(strbuf_read_fifo_never_waits)
{
	struct fp_strbuf sb;
	struct fp_diag d;
	char path[256];
	int wfd, rfd;

	tmp_path(path, sizeof(path), "fifo");
	unlink(path);
	ASSERT_OK(mkfifo(path, 0600));
	fp_strbuf_init(&sb, 0);
	ASSERT_EQ(fp_strbuf_read_file(&sb, path, &d), FP_EIO);
	ASSERT_NOT_NULL(strstr(d.msg, "no process wrote to it"));
	/* with a writer that wrote and closed: the bytes it wrote */
	rfd = open(path, O_RDONLY | O_NONBLOCK); /* lets the writer open without waiting */
	ASSERT_GE(rfd, 0);
	wfd = open(path, O_WRONLY | O_NONBLOCK);
	ASSERT_GE(wfd, 0);
	ASSERT_EQ(write(wfd, "[1]", 3), 3);
	ASSERT_EQ(fp_strbuf_read_path(&sb, path, FP_STRBUF_READ_REGULAR, &d), FP_EIO);
	ASSERT_NOT_NULL(strstr(d.msg, "it is a FIFO, not a regular file"));
	close(wfd);
	ASSERT_OK(fp_strbuf_read_file(&sb, path, &d));
	ASSERT_STREQ(sb.buf, "[1]");
	close(rfd);
	fp_strbuf_release(&sb);
	/* a device is refused either way */
	fp_strbuf_init(&sb, 0);
	ASSERT_EQ(fp_strbuf_read_path(&sb, "/dev/null", FP_STRBUF_READ_REGULAR, &d), FP_EIO);
	ASSERT_NOT_NULL(strstr(d.msg, "a character device"));
	fp_strbuf_release(&sb);
	ASSERT_OK(unlink(path));
}

TEST(strbuf_oom)
{
	struct fp_strbuf sb;
	char path[256];
	long fail_at;
	int r, i;

	tmp_path(path, sizeof(path), "oom");
	fp_strbuf_init(&sb, 0);
	for (i = 0; i < 3000; i++)
		ASSERT_OK(fp_strbuf_addch(&sb, 'q'));
	ASSERT_OK(fp_strbuf_write_file(&sb, path, NULL));
	fp_strbuf_release(&sb);

	for (fail_at = 0;; fail_at++) {
		fpt_oom_install(fail_at);
		fp_strbuf_init(&sb, 0);
		r = fp_strbuf_addf(&sb, "%0500d", 7);
		for (i = 0; !r && i < 300; i++)
			r = fp_strbuf_add(&sb, "0123456789", 10);
		if (!r)
			r = fp_strbuf_read_file(&sb, path, NULL);
		if (!r)
			r = fp_strbuf_write_file(&sb, path, NULL);
		if (r) {
			ASSERT_EQ(r, FP_ENOMEM);
			ASSERT_EQ(sb.buf[sb.len], '\0');
		}
		fp_strbuf_release(&sb);
		ASSERT_EQ(fpt_oom_live(), 0);
		fpt_oom_uninstall();
		if (!r)
			break;
		ASSERT(fail_at < 100);
	}
	ASSERT(fail_at > 2);
	ASSERT_EQ(unlink(path), 0);
}
