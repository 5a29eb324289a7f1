/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test-only builder of Debugger record buffers (docs/formats/record-format.md, v1), shared by
 * the test-debug-*.c files: it lays out the header and writes value and address records from
 * plain arrays, computing the summary words the device helpers would; with a check area it
 * writes the extended header and the tensor table as the host does and folds instances into
 * check slots as the device's `_fire` does (python/flagprism/_checks.py). It is deliberately
 * independent of src/debug/ (written from the format document), so the tests check the decoder
 * and the findings against the format, not against themselves.
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
	uint64_t rec;    /* word where the record slots start: 8, or R with a check area */
	uint64_t np, nc; /* tensor-table entries and check slots (0 without a check area) */
};

#define DBGB_NO_DUMP UINT64_MAX

/* Header and zeroed slots; `arena` sets layout flag 0 with `cap` dump words. */
void dbgb_init(struct dbgb *b, uint64_t S, uint64_t P, uint64_t nsites, bool arena, uint64_t cap);
/*
 * The same with a check area (layout flag 1): the extended header (NP = `nparams`, NC =
 * `nchecks`, flags bit 0 = `suppress`, R), a tensor table of zero entries and zeroed check
 * slots, then the records. S = 0 is check mode (no records).
 */
void dbgb_init_checks(struct dbgb *b, uint64_t S, uint64_t P, uint64_t nsites, bool arena,
		      uint64_t cap, uint64_t nparams, uint64_t nchecks, bool suppress);
void dbgb_free(struct dbgb *b);
size_t dbgb_bytes(const struct dbgb *b);
/* Word `i` of slot `k` of program `p`. */
uint64_t *dbgb_slot(struct dbgb *b, uint64_t p, uint64_t k);
/* Byte offset of word `i` of slot `k` of program `p`. */
uint64_t dbgb_off(const struct dbgb *b, uint64_t p, uint64_t k, unsigned i);

/* Tensor-table entry `i`: a parameter's view and storage ([lo, hi) each). */
void dbgb_table(struct dbgb *b, uint64_t i, uint64_t view_lo, uint64_t view_hi, uint64_t storage_lo,
		uint64_t storage_hi);
/* The 32 words of check slot `c`, and the byte offset of its word `w`. */
uint64_t *dbgb_check(struct dbgb *b, uint64_t c);
uint64_t dbgb_check_off(const struct dbgb *b, uint64_t c, unsigned w);

/*
 * One instance where slot `c`'s rule fired, folded in as the device's `_fire` does: fired += 1,
 * count += `count`, word 3 = max(word 3, INT64_MAX - lo) and word 4 = max(word 4, hi) (signed
 * 64-bit atomics), the first instance ((program << 32 | seq) + 1, lowest wins) with its `lane`,
 * `value` (an address, or a float's bits) and loop `iter`, and `program` into the list of the 8
 * lowest programs (word 12 counts those that did not fit).
 */
void dbgb_fire(struct dbgb *b, uint64_t c, uint64_t program, uint64_t seq, uint64_t count,
	       uint64_t lane, uint64_t value, uint64_t lo, uint64_t hi, int64_t iter);
/* A value rule's instance: value, lo and hi are the first element's float64 bits. */
void dbgb_fire_value(struct dbgb *b, uint64_t c, uint64_t program, uint64_t seq, uint64_t count,
		     uint64_t lane, double value, int64_t iter);
/* A nan/inf instance holding it because a read did: words 10 (+1) and 11 (+elems). */
void dbgb_descend(struct dbgb *b, uint64_t c, uint64_t elems);

/*
 * A copy of site table `sites` (a JSON object) with `members` (", \"params\": [...], ...")
 * spliced in before its closing brace; free() it.
 */
char *dbgb_sites_with(const char *sites, const char *members);

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

/*
 * The same kernel as the device with checks runs it: DBGB_SITES_CHECKS adds `params` (x_ptr,
 * y_ptr, n, BLOCK) and four check slots: 0 bounds of the load (site 1, cands x_ptr), 1 nan_mem
 * of x (site 2), 2 nan of y (site 3, reads x), 3 bounds of the store (site 4, cands y_ptr). The
 * records are the fixture's, the store's lanes in y's view. x_ptr's view is the 48 bytes the loads
 * read (DBGB_X) in a 4 KiB storage, y_ptr's its own 48 bytes (DBGB_Y), n and BLOCK are zero
 * entries. Slot 1 fired in programs 0 and 1 (lane 3, at the x record: sequence 1); y's NaN
 * descends from x in every program (slot 2, words 10/11 = 3); no access is out of bounds.
 */
#define DBGB_X UINT64_C(0x7f0000001000)
#define DBGB_Y UINT64_C(0x7f0000003000)
#define DBGB_NPARAMS 4
#define DBGB_NCHECKS 4
extern const char DBGB_SITES_CHECKS[];
void dbgb_fixture_checks(struct dbgb *b, bool arena, uint64_t cap);

#endif /* FP_TEST_DEBUG_H */
