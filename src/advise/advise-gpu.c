/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The per-architecture facts the advice needs beyond the device table's peaks: resident warps
 * and blocks, registers and shared memory per SM, and the theoretical occupancy they give a
 * kernel. Values are those of the CUDA C++ Programming Guide's "Technical Specifications per
 * Compute Capability" table (docs/guide/advise.md repeats them); a GPU of another architecture
 * gets no occupancy, never a guess. It does not know peaks (view-metric.c does).
 */
#include "fp-setup.h"

#include "advise/advise-internal.h"

#define KB 1024u

/* arch, name, warps, blocks, registers, shared memory for blocks, reserved per block, unit */
static const struct fp__adv_gpu gpus[] = {
	{"70", "Volta (sm_70)", 64, 32, 65536, 96 * KB, 0, 256},
	{"75", "Turing (sm_75)", 32, 16, 65536, 64 * KB, 0, 256},
	{"80", "Ampere (sm_80)", 64, 32, 65536, 164 * KB, 1 * KB, 256},
	{"86", "Ampere (sm_86)", 48, 16, 65536, 100 * KB, 1 * KB, 256},
	{"87", "Ampere (sm_87)", 48, 16, 65536, 164 * KB, 1 * KB, 256},
	{"89", "Ada (sm_89)", 48, 24, 65536, 100 * KB, 1 * KB, 256},
	{"90", "Hopper (sm_90)", 64, 32, 65536, 228 * KB, 1 * KB, 256},
	{"100", "Blackwell (sm_100)", 64, 32, 65536, 228 * KB, 1 * KB, 256},
	{"120", "Blackwell (sm_120)", 48, 32, 65536, 100 * KB, 1 * KB, 256},
};

const struct fp__adv_gpu *fp__adv_gpu_of(const char *arch)
{
	char digits[16];
	size_t i, n = 0;

	if (!arch)
		return NULL;
	if (!strncmp(arch, "sm_", 3))
		arch += 3;
	/* "90a", "100f": the suffix does not change these limits */
	while (arch[n] >= '0' && arch[n] <= '9' && n + 1 < sizeof(digits)) {
		digits[n] = arch[n];
		n++;
	}
	digits[n] = '\0';
	for (i = 0; i < FP_ARRAY_SIZE(gpus); i++)
		if (!strcmp(gpus[i].arch, digits))
			return &gpus[i];
	return NULL;
}

static double round_up(double v, double unit)
{
	return ceil(v / unit) * unit;
}

bool fp__adv_occupancy(const struct fp__adv_gpu *g, double warps, double regs, double shared,
		       struct fp__adv_occ *out)
{
	static const char *const names[4] = {"warps", "blocks", "registers", "shared memory"};
	double lim[4], best = INFINITY, next = INFINITY;
	int i, which = 0;

	memset(out, 0, sizeof(*out));
	if (!g || isnan(warps) || warps < 1 || warps > g->max_warps || isnan(regs) || regs < 0 ||
	    regs > 255)
		return false;
	lim[0] = floor(g->max_warps / warps);
	lim[1] = g->max_blocks;
	/* registers go to warps in units of reg_unit */
	lim[2] = regs > 0 ? floor(floor(g->regs / round_up(regs * 32, g->reg_unit)) / warps) :
			    INFINITY;
	lim[3] = !isnan(shared) && shared > 0 ?
			 floor(g->shared / (round_up(shared, 128) + g->reserved)) :
			 INFINITY;
	for (i = 0; i < 4; i++)
		if (lim[i] < best) {
			best = lim[i];
			which = i;
		}
	for (i = 0; i < 4; i++)
		if (i != which && lim[i] < next)
			next = lim[i];
	out->blocks = best;
	out->occupancy = best * warps / g->max_warps;
	out->limiter = names[which];
	out->next_occupancy = FP_MIN(1.0, next * warps / g->max_warps);
	return true;
}
