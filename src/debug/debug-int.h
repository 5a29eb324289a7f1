/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internals of the Debugger's decoded run, shared by the files of src/debug/ (site table parser,
 * buffer decoder, accessors). The report writers in src/report/ do not include this: they use
 * the public accessors of <flagprism/debug.h> only, so the model they see is the one later
 * analyses (and clients) see.
 */
#ifndef FP_DEBUG_INT_H
#define FP_DEBUG_INT_H

#include <flagprism/arena.h>
#include <flagprism/debug.h>

struct fp_dbg_run {
	struct fp_dbg_run_info info;
	struct fp_arena arena;          /* strings, statements, sites, reads, index arrays */
	struct fp_dbg_statement *stmts; /* source order */
	size_t nstmts;
	struct fp_dbg_site *sites; /* index = id - 1 */
	size_t nsites;
	struct fp_dbg_record *records; /* grouped by site, then program, then execution */
	size_t nrecords;
	size_t *site_first; /* records of site i: [site_first[i], site_first[i+1]) */
	uint64_t *dump;     /* copy of the used part of the dump arena */
	size_t dump_words;
};

/*
 * Parse the site table into `run` (kernel, file, level, addr_level, statements in source order,
 * sites by id, resolved reads). Returns FP_OK, FP_EFORMAT/FP_EVERSION (diag "site table: ...",
 * position in the JSON), FP_ENOMEM or FP_ELIMIT.
 */
int fp__dbg_sites_parse(struct fp_dbg_run *run, const char *json, size_t len, struct fp_diag *diag);

/* Limits on the site table, so a hostile one cannot make us allocate without bound. */
#define FP_DBG_MAX_SITES 65535u /* site ids are 16 bits in the record */
#define FP_DBG_MAX_STATEMENTS (1u << 20)

#endif /* FP_DEBUG_INT_H */
