/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Status names and messages (generated from FP_STATUS_MAP) and the fp_diag helpers.
 */
#include "fp-setup.h"

const char *fp_strerror(int status)
{
	switch (status) {
	case FP_OK:
		return "success";
#define X(name, val, msg) \
	case FP_E##name:  \
		return msg;
		FP_STATUS_MAP(X)
#undef X
	default:
		return "unknown status";
	}
}

const char *fp_status_name(int status)
{
	switch (status) {
	case FP_OK:
		return "FP_OK";
#define X(name, val, msg) \
	case FP_E##name:  \
		return "FP_E" #name;
		FP_STATUS_MAP(X)
#undef X
	default:
		return "FP_EUNKNOWN";
	}
}

void fp_diag_clear(struct fp_diag *diag)
{
	if (diag)
		memset(diag, 0, sizeof(*diag));
}

FP_PRINTF(6, 0)
static int diag_vset(struct fp_diag *diag, int status, uint64_t offset, uint32_t line, uint32_t col,
		     const char *fmt, va_list ap)
{
	if (!diag)
		return status;
	diag->status = status;
	diag->offset = offset;
	diag->line = line;
	diag->col = col;
	vsnprintf(diag->msg, sizeof(diag->msg), fmt, ap);
	return status;
}

int fp_diag_set(struct fp_diag *diag, int status, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_vset(diag, status, offset, 0, 0, fmt, ap);
	va_end(ap);
	return status;
}

int fp_diag_set_pos(struct fp_diag *diag, int status, uint64_t offset, uint32_t line, uint32_t col,
		    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_vset(diag, status, offset, line, col, fmt, ap);
	va_end(ap);
	return status;
}
