/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Finding and running the Python interpreter that holds Triton, PyTorch and the flagprism
 * package. The CLI needs Python for what only Python can answer (the doctor's probe) and, later,
 * to run a user's script under the debugger or profiler. Everything here runs the interpreter
 * directly, never through a shell; output capture is bounded and time-limited.
 */
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define PYTHON_ENV "FLAGPRISM_PYTHON"

/* NULL when `path` is a file we may execute, else why not. */
static const char *not_executable(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return strerror(errno);
	if (!S_ISREG(st.st_mode))
		return "not a regular file";
	if (access(path, X_OK) != 0)
		return "not executable";
	return NULL;
}

static bool is_executable_file(const char *path)
{
	return not_executable(path) == NULL;
}

/* Look `name` up on $PATH like execvp would; true with the result in `out`. */
static bool search_path(const char *name, char *out, size_t size)
{
	const char *path = getenv("PATH"), *p, *colon;
	size_t len;
	int n;

	if (!path || !path[0])
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path;; p = colon + 1) {
		colon = strchr(p, ':');
		len = colon ? (size_t)(colon - p) : strlen(p);
		/* An empty PATH entry means the current directory. */
		if (len == 0)
			n = snprintf(out, size, "./%s", name);
		else
			n = snprintf(out, size, "%.*s/%s", (int)len, p, name);
		if (n > 0 && (size_t)n < size && is_executable_file(out))
			return true;
		if (!colon)
			break;
	}
	out[0] = '\0';
	return false;
}

/*
 * For an executable under <prefix>/lib/pythonX.Y/site-packages/, the interpreter of that
 * environment: <prefix>/bin/pythonX.Y, else <prefix>/bin/python3.
 */
static bool python_of_site_packages(const char *exe, char *out, size_t size)
{
	const char *lib = strstr(exe, "/lib/python"), *ver, *end;
	int n;

	if (!lib)
		return false;
	ver = lib + strlen("/lib/python");
	end = strchr(ver, '/');
	if (!end || strncmp(end, "/site-packages/", 15) != 0 || end - ver > 16)
		return false;
	n = snprintf(out, size, "%.*s/bin/python%.*s", (int)(lib - exe), exe, (int)(end - ver),
		     ver);
	if (n > 0 && (size_t)n < size && is_executable_file(out))
		return true;
	n = snprintf(out, size, "%.*s/bin/python3", (int)(lib - exe), exe);
	if (n > 0 && (size_t)n < size && is_executable_file(out))
		return true;
	out[0] = '\0';
	return false;
}

int fpt_python_find(struct fpt_python *py)
{
	const char *env = getenv(PYTHON_ENV);
	char exe[FPT_PATH_MAX], *slash;
	const char *why;
	ssize_t n;
	int len;

	py->path[0] = '\0';
	py->error[0] = '\0';
	if (env && env[0]) {
		/* An explicit choice is never second-guessed: if it does not work, say so. */
		py->origin = "$" PYTHON_ENV;
		if (!strchr(env, '/')) {
			if (search_path(env, py->path, sizeof(py->path)))
				return FP_OK;
			snprintf(py->error, sizeof(py->error),
				 "cannot run Python: %s=%s is not found on PATH", PYTHON_ENV, env);
			return FP_ENOENT;
		}
		snprintf(py->path, sizeof(py->path), "%s", env);
		why = not_executable(py->path);
		if (!why)
			return FP_OK;
		snprintf(py->error, sizeof(py->error), "cannot run Python: %s=%s: %s", PYTHON_ENV,
			 env, why);
		return FP_ENOENT;
	}

	/*
	 * An installed flagprism is the environment's own command, in the same bin/ as its
	 * python3 (or python: some environments have only that name); a link to it elsewhere
	 * (~/.local/bin) resolves to it through /proc/self/exe...
	 */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0 && (size_t)n < sizeof(exe) - 1) {
		static const char *const names[] = {"python3", "python"};
		size_t i;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		for (i = 0; slash && i < FPT_ARRAY_SIZE(names); i++) {
			len = snprintf(py->path, sizeof(py->path), "%.*s/%s", (int)(slash - exe),
				       exe, names[i]);
			if (len > 0 && (size_t)len < sizeof(py->path) &&
			    is_executable_file(py->path)) {
				py->origin = "next to flagprism";
				return FP_OK;
			}
		}
		/* ...or inside a package: <prefix>/lib/pythonX.Y/site-packages/flagprism/_bin/. */
		if (python_of_site_packages(exe, py->path, sizeof(py->path))) {
			py->origin = "the environment flagprism is installed in";
			return FP_OK;
		}
	}
	if (search_path("python3", py->path, sizeof(py->path))) {
		py->origin = "PATH";
		return FP_OK;
	}
	py->origin = "nowhere";
	py->path[0] = '\0';
	snprintf(py->error, sizeof(py->error),
		 "cannot find Python: %s is not set, there is no python3 next to the flagprism "
		 "executable and none on PATH",
		 PYTHON_ENV);
	return FP_ENOENT;
}

/* argv for the interpreter: path, args..., NULL. Caller frees the array (not the strings). */
static char **build_argv(struct fpt_python *py, const char *const *args, size_t nargs)
{
	char **argv;
	size_t i;

	argv = calloc(nargs + 2, sizeof(*argv));
	if (!argv) {
		snprintf(py->error, sizeof(py->error), "out of memory");
		return NULL;
	}
	/* exec* take char *const[] for historical reasons; they never write to the strings. */
	argv[0] = py->path;
	for (i = 0; i < nargs; i++)
		argv[i + 1] = (char *)args[i];
	argv[nargs + 1] = NULL;
	return argv;
}

void fpt_capture_release(struct fpt_capture *cap)
{
	fp_strbuf_release(&cap->out);
	fp_strbuf_release(&cap->err);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Read what is available on `fd` into `sb` (up to `max` bytes kept, the rest dropped so that the
 * child never blocks on a full pipe). Returns 1 on data, 0 on end of file, -1 on error.
 */
static int drain(int fd, struct fp_strbuf *sb, size_t max, bool *truncated)
{
	char chunk[4096];
	ssize_t n;
	size_t keep;

	n = read(fd, chunk, sizeof(chunk));
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : -1;
	if (n == 0)
		return 0;
	keep = sb->len < max ? max - sb->len : 0;
	if ((size_t)n < keep)
		keep = (size_t)n;
	if (keep < (size_t)n)
		*truncated = true;
	if (keep && fp_strbuf_add(sb, chunk, keep) != FP_OK)
		*truncated = true;
	return 1;
}

static int wait_child(pid_t pid, int *exit_code)
{
	int st;

	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	if (WIFEXITED(st))
		*exit_code = WEXITSTATUS(st);
	else if (WIFSIGNALED(st))
		*exit_code = -WTERMSIG(st);
	else
		*exit_code = -1;
	return 0;
}

int fpt_python_capture(struct fpt_python *py, const char *const *args, size_t nargs,
		       size_t max_bytes, int timeout_ms, struct fpt_capture *cap)
{
	posix_spawn_file_actions_t fa;
	int out_pipe[2], err_pipe[2];
	struct pollfd pfd[2];
	int64_t deadline = 0;
	char **argv;
	pid_t pid;
	int err, status = FP_EIO, open_fds, wait_ms, r;

	memset(cap, 0, sizeof(*cap));
	fp_strbuf_init(&cap->out, 0);
	fp_strbuf_init(&cap->err, 0);
	py->error[0] = '\0';

	argv = build_argv(py, args, nargs);
	if (!argv)
		return FP_ENOMEM;
	if (pipe2(out_pipe, O_CLOEXEC) != 0) {
		err = errno;
		goto fail_out_pipe;
	}
	if (pipe2(err_pipe, O_CLOEXEC) != 0) {
		err = errno;
		goto fail_err_pipe;
	}
	err = posix_spawn_file_actions_init(&fa);
	if (err)
		goto fail_actions;
	err = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (!err)
		err = posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
	if (!err)
		err = posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
	if (err)
		goto fail_spawn;
	err = posix_spawn(&pid, py->path, &fa, NULL, argv, environ);
	if (err) {
		snprintf(py->error, sizeof(py->error), "cannot run Python %s (from %s): %s",
			 py->path, py->origin ? py->origin : "?", strerror(err));
		status = FP_ENOENT;
		goto fail_spawn;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(out_pipe[1]);
	close(err_pipe[1]);
	free(argv);

	if (timeout_ms > 0)
		deadline = now_ms() + timeout_ms;
	pfd[0].fd = out_pipe[0];
	pfd[1].fd = err_pipe[0];
	pfd[0].events = pfd[1].events = POLLIN;
	open_fds = 2;
	while (open_fds > 0) {
		wait_ms = -1;
		if (deadline) {
			int64_t left = deadline - now_ms();

			if (left <= 0) {
				/* Descendants may hold the pipes open: stop reading, do not wait for EOF. */
				kill(pid, SIGKILL);
				cap->timed_out = true;
				break;
			}
			wait_ms = left > 1000000 ? 1000000 : (int)left;
		}
		r = poll(pfd, 2, wait_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		if (pfd[0].fd >= 0 && pfd[0].revents) {
			if (drain(pfd[0].fd, &cap->out, max_bytes, &cap->out_truncated) <= 0) {
				pfd[0].fd = -1;
				open_fds--;
			}
		}
		if (pfd[1].fd >= 0 && pfd[1].revents) {
			if (drain(pfd[1].fd, &cap->err, max_bytes, &cap->err_truncated) <= 0) {
				pfd[1].fd = -1;
				open_fds--;
			}
		}
	}
	close(out_pipe[0]);
	close(err_pipe[0]);
	if (wait_child(pid, &cap->exit_code) != 0) {
		snprintf(py->error, sizeof(py->error), "waiting for Python failed: %s",
			 strerror(errno));
		return FP_EIO;
	}
	return FP_OK;

fail_spawn:
	posix_spawn_file_actions_destroy(&fa);
fail_actions:
	close(err_pipe[0]);
	close(err_pipe[1]);
fail_err_pipe:
	close(out_pipe[0]);
	close(out_pipe[1]);
fail_out_pipe:
	if (status != FP_ENOENT) {
		snprintf(py->error, sizeof(py->error), "cannot set up pipes to Python: %s",
			 strerror(err));
		status = FP_EIO;
	}
	free(argv);
	return status;
}

int fpt_python_exec(struct fpt_python *py, const char *const *args, size_t nargs)
{
	char **argv = build_argv(py, args, nargs);
	int err;

	if (!argv)
		return FP_ENOMEM;
	fflush(stdout);
	fflush(stderr);
	execv(py->path, argv);
	err = errno;
	snprintf(py->error, sizeof(py->error), "cannot run Python %s (from %s): %s", py->path,
		 py->origin ? py->origin : "?", strerror(err));
	free(argv);
	return FP_ENOENT;
}

/*
 * Run with `python -c`: sys.path[0] is then '' (the current directory), which is dropped so a
 * source tree there cannot shadow the installed package; _run puts the script's directory in
 * its place, as `python SCRIPT` would.
 */
static const char bootstrap[] = "import sys\n"
				"if sys.path and sys.path[0] == '':\n"
				"    del sys.path[0]\n"
				"from flagprism._run import main\n"
				"main()\n";

int fpt_python_tool_argv(struct fpt_python *py, const char *const *words, size_t nwords,
			 char *const *prog, int nprog, const char ***argv, size_t *argc)
{
	const char **args;
	size_t n = 0, i;
	int rc, j;

	/* A missing script is said here, before Python and Triton take seconds to start. */
	if (strcmp(prog[0], "pytest") != 0) {
		struct stat st;
		char main_py[FPT_PATH_MAX];

		if (access(prog[0], R_OK) != 0)
			return fpt_die("cannot read script '%s': %s", prog[0], strerror(errno));
		/* Python runs a directory only through its __main__.py. */
		if (stat(prog[0], &st) == 0 && S_ISDIR(st.st_mode) &&
		    ((size_t)snprintf(main_py, sizeof(main_py), "%s/__main__.py", prog[0]) >=
			     sizeof(main_py) ||
		     access(main_py, R_OK) != 0))
			return fpt_die("cannot run '%s': '%s' is a directory without a __main__.py",
				       prog[0], prog[0]);
	}
	rc = fpt_python_find(py);
	if (rc != FP_OK)
		return fpt_die("%s", py->error);
	args = calloc((size_t)nprog + nwords + 5, sizeof(*args));
	if (!args)
		return fpt_die("out of memory");
	args[n++] = py->path;
	args[n++] = "-c";
	args[n++] = bootstrap;
	for (i = 0; i < nwords; i++)
		args[n++] = words[i];
	args[n++] = "--";
	for (j = 0; j < nprog; j++)
		args[n++] = prog[j];
	args[n] = NULL;
	*argv = args;
	*argc = n;
	return FPT_CONTINUE;
}

int fpt_python_run_tool(const char *const *words, size_t nwords, char *const *prog, int nprog)
{
	struct fpt_python py;
	const char **args;
	size_t n;
	int rc;

	rc = fpt_python_tool_argv(&py, words, nwords, prog, nprog, &args, &n);
	if (rc != FPT_CONTINUE)
		return rc;
	/* args[0] is the interpreter, which fpt_python_exec puts back in front. */
	fpt_python_exec(&py, args + 1, n - 1);
	free(args);
	return fpt_die("%s", py.error);
}
