/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CUPTI probe: find a libcupti, load it, ask its API version, unload it. Used by `flagprism
 * doctor` and, later, by the CUPTI backend to decide which copy to bind. It needs no CUDA header:
 * the one function it calls is declared here. It does not subscribe, enable activities or touch
 * a device; it prints nothing and keeps every loader message in the result.
 */
#include "fp-setup.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <flagprism/cupti.h>

#include "backend/cuda/cupti-internal.h"

/* CUptiResult cuptiGetVersion(uint32_t *version); CUptiResult is an int-sized enum, 0 = OK. */
typedef int (*cupti_get_version_fn)(uint32_t *version);

/* Names tried in a directory and through the loader, newest first after the unversioned link. */
static const char *const cupti_names[] = {"libcupti.so", "libcupti.so.13", "libcupti.so.12"};

static const char *const toolkit_dirs[] = {
	"/usr/local/cuda/lib64",
	"/usr/local/cuda/targets/x86_64-linux/lib",
};

struct probe {
	struct fp_cupti_probe_result *out;
	unsigned dirs;       /* directories looked into */
	char complaint[256]; /* the loader's first complaint about a file that exists */
};

const char *fp_cupti_origin_name(enum fp_cupti_origin origin)
{
	static const char *const names[] = {"none", "process", "env", "extra", "toolkit", "loader"};

	return (unsigned)origin < FP_ARRAY_SIZE(names) ? names[origin] : "unknown";
}

static void copy_str(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

/* Messages are cut to fit: a truncated path in an error beats no error. */
FP_PRINTF(2, 3)
static void set_error(struct fp_cupti_probe_result *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out->error, sizeof(out->error), fmt, ap);
	va_end(ap);
}

static bool path_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* Whether libnvperf_host.so is beside `lib` (a path with a '/'). */
static bool nvperf_beside(const char *lib)
{
	const char *slash = strrchr(lib, '/');
	char buf[FP_CUPTI_PATH_MAX];
	int n;

	if (!slash)
		return false;
	n = snprintf(buf, sizeof(buf), "%.*s/libnvperf_host.so", (int)(slash - lib), lib);
	return n > 0 && (size_t)n < sizeof(buf) && path_exists(buf);
}

/* Fill `out` from a handle whose library is now in the process; returns the probe's status. */
static int describe(struct probe *p, void *h, bool already, enum fp_cupti_origin origin)
{
	struct fp_cupti_probe_result *out = p->out;
	struct link_map *lm = NULL;
	cupti_get_version_fn get_version;
	uint32_t version = 0;
	void *sym;
	int rc;

	out->already_loaded = already;
	out->origin = origin;
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0])
		copy_str(out->path, sizeof(out->path), lm->l_name);
	out->nvperf_host = nvperf_beside(out->path);

	dlerror();
	sym = dlsym(h, "cuptiGetVersion");
	if (!sym) {
		const char *e = dlerror();

		set_error(out, "%s is not CUPTI: %s", out->path,
			  e ? e : "no cuptiGetVersion symbol");
		return FP_EVENDOR;
	}
	/* ISO C has no void* -> function pointer conversion; POSIX guarantees the bytes match. */
	memcpy(&get_version, &sym, sizeof(get_version));
	rc = get_version(&version);
	if (rc != 0) {
		set_error(out, "cuptiGetVersion() failed with CUPTI error %d", rc);
		return FP_EVENDOR;
	}
	out->api_version = version;
	out->found = true;
	out->pcsampling = dlsym(h, "cuptiPCSamplingEnable") && dlsym(h, "cuptiPCSamplingGetData") &&
			  dlsym(h, "cuptiGetCubinCrc");
	return FP_OK;
}

/*
 * Try one file or soname. Returns true when a library got loaded (the search ends there, with
 * *status set), false to go on looking.
 */
static bool try_load(struct probe *p, const char *name, enum fp_cupti_origin origin, int *status)
{
	bool already = true;
	const char *e;
	void *h;

	p->out->tried++;
	FP__LSAN_DISABLE();
	h = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	if (!h) {
		already = false;
		h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	}
	if (!h) {
		FP__LSAN_ENABLE();
		e = dlerror();
		/* "no such file" for a bare soname is expected; a file that exists and fails is news. */
		if (!p->complaint[0] && strchr(name, '/') && e)
			copy_str(p->complaint, sizeof(p->complaint), e);
		return false;
	}
	*status = describe(p, h, already, origin);
	/*
	 * Both dlopen calls above took a reference. Dropping ours unloads the library only when
	 * the probe was the one that loaded it; a copy the process already held stays.
	 */
	dlclose(h);
	FP__LSAN_ENABLE();
	return true;
}

static bool try_dir(struct probe *p, const char *dir, enum fp_cupti_origin origin, int *status)
{
	char path[FP_CUPTI_PATH_MAX];
	struct stat st;
	size_t i;
	int n;

	if (!dir || !dir[0] || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return false;
	p->dirs++;
	for (i = 0; i < FP_ARRAY_SIZE(cupti_names); i++) {
		n = snprintf(path, sizeof(path), "%s/%s", dir, cupti_names[i]);
		if (n < 0 || (size_t)n >= sizeof(path) || !path_exists(path))
			continue;
		if (try_load(p, path, origin, status))
			return true;
	}
	return false;
}

/* dl_iterate_phdr callback: the first loaded object whose file name starts with libcupti.so. */
static int find_loaded_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	char *found = data;
	const char *base;

	(void)size;
	if (!info->dlpi_name || !info->dlpi_name[0])
		return 0;
	base = strrchr(info->dlpi_name, '/');
	base = base ? base + 1 : info->dlpi_name;
	if (strncmp(base, "libcupti.so", 11) != 0)
		return 0;
	copy_str(found, FP_CUPTI_PATH_MAX, info->dlpi_name);
	return 1;
}

static const char *errno_text(int err)
{
	switch (err) {
	case ENOENT:
	case ENOTDIR:
		return "no such file or directory";
	case EACCES:
		return "permission denied";
	case ENAMETOOLONG:
		return "path too long";
	default:
		return "cannot access it";
	}
}

/* $FLAGPRISM_CUPTI_PATH is authoritative: whatever happens here is the final answer. */
static int probe_env(struct probe *p, const char *env)
{
	struct fp_cupti_probe_result *out = p->out;
	struct stat st;
	int status = FP_ENOENT;

	if (stat(env, &st) != 0) {
		set_error(out, "%s=%s: %s", FP_CUPTI_PATH_ENV, env, errno_text(errno));
		return FP_ENOENT;
	}
	if (S_ISDIR(st.st_mode)) {
		if (try_dir(p, env, FP_CUPTI_ORIGIN_ENV, &status))
			return status;
		if (p->complaint[0])
			set_error(out, "%s=%s: %s", FP_CUPTI_PATH_ENV, env, p->complaint);
		else
			set_error(out,
				  "%s=%s: no libcupti.so, libcupti.so.13 or libcupti.so.12 in it",
				  FP_CUPTI_PATH_ENV, env);
		return FP_ENOENT;
	}
	if (try_load(p, env, FP_CUPTI_ORIGIN_ENV, &status))
		return status;
	set_error(out, "%s=%s: %s", FP_CUPTI_PATH_ENV, env,
		  p->complaint[0] ? p->complaint : "cannot be loaded");
	return FP_ENOENT;
}

int fp_cupti_probe(const char *const *extra_dirs, size_t n_extra, struct fp_cupti_probe_result *out)
{
	char loaded[FP_CUPTI_PATH_MAX] = "";
	struct probe p;
	const char *env;
	int status = FP_ENOENT;
	size_t i;

	if (!out)
		return FP_EINVAL;
	memset(out, 0, sizeof(*out));
	if (n_extra && !extra_dirs) {
		copy_str(out->error, sizeof(out->error), "extra directory list is NULL");
		return FP_EINVAL;
	}
	memset(&p, 0, sizeof(p));
	p.out = out;
	env = secure_getenv(FP_CUPTI_PATH_ENV);
	if (env && !env[0])
		env = NULL;

	dl_iterate_phdr(find_loaded_cb, loaded);
	if (loaded[0] && try_load(&p, loaded, FP_CUPTI_ORIGIN_PROCESS, &status)) {
		if (status == FP_OK && env)
			set_error(out, "%s ignored: the process already holds a libcupti",
				  FP_CUPTI_PATH_ENV);
		return status;
	}
	if (env)
		return probe_env(&p, env);

	for (i = 0; i < n_extra; i++)
		if (try_dir(&p, extra_dirs[i], FP_CUPTI_ORIGIN_EXTRA, &status))
			return status;
	for (i = 0; i < FP_ARRAY_SIZE(toolkit_dirs); i++)
		if (try_dir(&p, toolkit_dirs[i], FP_CUPTI_ORIGIN_TOOLKIT, &status))
			return status;
	for (i = 0; i < FP_ARRAY_SIZE(cupti_names); i++)
		if (try_load(&p, cupti_names[i], FP_CUPTI_ORIGIN_LOADER, &status))
			return status;

	if (p.complaint[0])
		set_error(
			out,
			"libcupti not usable (looked in %u directories and the loader's path): %s",
			p.dirs, p.complaint);
	else
		set_error(out,
			  "libcupti not found (looked in %u directories and the loader's path); "
			  "set %s to its file or directory",
			  p.dirs, FP_CUPTI_PATH_ENV);
	return FP_ENOENT;
}
