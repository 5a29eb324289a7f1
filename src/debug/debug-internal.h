/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internals of the Debugger's decoded run, shared by the files of src/debug/ (site table parser,
 * buffer decoder, accessors). The report writers (report*.c) do not include this: they use
 * the public accessors of <flagprism/debug.h> only, so the model they see is the one later
 * analyses (and clients) see.
 */
#ifndef FP_DEBUG_INTERNAL_H
#define FP_DEBUG_INTERNAL_H

#include <flagprism/debug.h>

#include "core/arena-internal.h"

struct fp_dbg_run {
	struct fp_dbg_run_info info;
	struct fp_arena arena;          /* strings, statements, sites, reads, index arrays */
	struct fp_dbg_statement *stmts; /* source order */
	size_t nstmts;
	struct fp_dbg_site *sites; /* index = id - 1 */
	size_t nsites;
	struct fp_dbg_frame *frames; /* index = id - 1 */
	size_t nframes;
	struct fp_dbg_unobserved *unobserved;
	size_t nunobserved;
	struct fp_dbg_record *records; /* grouped by site, then program, then execution */
	size_t nrecords;
	size_t *site_first; /* records of site i: [site_first[i], site_first[i+1]) */
	uint64_t *dump;     /* copy of the used part of the dump arena */
	size_t dump_words;
	const char **params; /* kernel parameter names (site table `params`) */
	size_t nparams;
	struct fp_dbg_table_entry *table; /* the buffer's tensor table (nparams), or NULL */
	struct fp_dbg_check_slot *checks; /* site table `check_slots`, then the device's words */
	size_t nchecks;
};

/*
 * Parse the site table into `run` (kernel, file, level, addr_level, statements in source order,
 * sites by id, resolved reads). Returns FP_OK, FP_EFORMAT/FP_EVERSION (diag "site table: ...",
 * position in the JSON), FP_ENOMEM or FP_ELIMIT.
 */
int fp__dbg_sites_parse(struct fp_dbg_run *run, const char *json, size_t len, struct fp_diag *diag);

struct fp_intern;

/*
 * Intern (add = true) or look up the key of variable `name` of frame `frame` ("<frame>:<name>"):
 * the same name in two frames (a kernel's `acc` and a helper's) is two variables. Returns what
 * fp_intern_add()/fp_intern_find() return (FP_ENOMEM too).
 */
int fp__dbg_var_key(struct fp_intern *names, uint32_t frame, const char *name, bool add,
		    uint32_t *id);

/* Limits on the site table, so a hostile one cannot make us allocate without bound. */
#define FP_DBG_MAX_SITES 65535u /* site ids are 16 bits in the record */
#define FP_DBG_MAX_STATEMENTS (1u << 20)
#define FP_DBG_MAX_FRAMES 65535u
#define FP_DBG_MAX_FRAME_DEPTH 32u /* helper nesting */
#define FP_DBG_MAX_UNOBSERVED (1u << 20)

#endif /* FP_DEBUG_INTERNAL_H */
