/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test-only builder of Debugger record buffers (docs/formats/record-format.md, v1), shared by
 * test-debug-decode.c and test-debug-report.c: it lays out the header and writes value and
 * address records from plain arrays, computing the summary words the device helpers would. It
 * is deliberately independent of src/debug/ (written from the format document), so the tests
 * check the decoder against the format, not against itself.
 */
#ifndef FP_TEST_DEBUG_H
#define FP_TEST_DEBUG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flagprism/dtype.h>

struct dbgb {
	uint64_t *w; /* the buffer, as 64-bit words (host order = little-endian here) */
	size_t nwords;
	uint64_t S, P, cap;
	uint64_t cursor; /* dump words handed out */
};

#define DBGB_NO_DUMP UINT64_MAX

/* Header and zeroed slots; `arena` sets layout flag 0 with `cap` dump words. */
void dbgb_init(struct dbgb *b, uint64_t S, uint64_t P, uint64_t nsites, bool arena, uint64_t cap);
void dbgb_free(struct dbgb *b);
size_t dbgb_bytes(const struct dbgb *b);
/* Word `i` of slot `k` of program `p`. */
uint64_t *dbgb_slot(struct dbgb *b, uint64_t p, uint64_t k);
/* Byte offset of word `i` of slot `k` of program `p`. */
uint64_t dbgb_off(const struct dbgb *b, uint64_t p, uint64_t k, unsigned i);

/*
 * A value record of `numel` = prod(shape) elements `vals` (integers given as doubles) in slot
 * k of program p. With `dump` the values also go to the arena (floats as float64 bits,
 * integers as int64); returns the dump offset or DBGB_NO_DUMP.
 */
uint64_t dbgb_value(struct dbgb *b, uint64_t p, uint64_t k, unsigned site, enum fp_dtype dt,
		    const uint64_t *shape, unsigned ndim, const double *vals, bool dump);

/* An address record: lane addresses and mask (NULL: all active); kind 2 load, 3 store. */
uint64_t dbgb_addr(struct dbgb *b, uint64_t p, uint64_t k, unsigned site, unsigned kind,
		   enum fp_dtype pointee, const uint64_t *shape, unsigned ndim,
		   const uint64_t *addrs, const bool *mask, bool dump);

/*
 * The add_kernel fixture: DBGB_NP programs of DBGB_NS slots; statement line 12 `x = tl.load(...)`
 * (site 1 load, site 2 value x), line 14 `y = x * 2` (site 3, reads x), line 15 the store of y
 * (site 4). Four lanes per record; lane 3 of x and y is NaN; program 2's load is masked to three
 * lanes, every store is. With `arena`, every record also dumps (4 words each, `cap` words).
 */
#define DBGB_NP 3
#define DBGB_NS 6
extern const char DBGB_SITES[];
void dbgb_fixture(struct dbgb *b, bool arena, uint64_t cap);

#endif /* FP_TEST_DEBUG_H */
