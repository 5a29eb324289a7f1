/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The logging callback. Messages are formatted into a stack buffer only when a callback is set
 * and the level passes; nothing here allocates or prints.
 */
#include "fp-setup.h"


static fp_log_fn log_fn;
static void *log_user;
static enum fp_log_level log_max = FP_LOG_WARN;

void fp_log_set(fp_log_fn fn, void *user, enum fp_log_level max_level)
{
	log_fn = fn;
	log_user = user;
	log_max = max_level;
}

void fp_log(enum fp_log_level level, enum fp_log_domain domain, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	fp_log_fn fn = log_fn;

	if (!fn || level > log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fn(log_user, level, domain, buf);
}

const char *fp_log_level_name(enum fp_log_level level)
{
	static const char *const names[] = {"error", "warn", "info", "debug"};

	return (unsigned)level < FP_ARRAY_SIZE(names) ? names[level] : "unknown";
}

const char *fp_log_domain_name(enum fp_log_domain domain)
{
	static const char *const names[] = {"core", "debugger", "profiler", "ir", "vendor"};

	return (unsigned)domain < FP_ARRAY_SIZE(names) ? names[domain] : "unknown";
}
