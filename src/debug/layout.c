// SPDX-License-Identifier: Apache-2.0
/*
 * The record buffer's layout as a launch decides it: how many record slots each program gets,
 * the dump arena, the check area, the words the host writes first, and a tensor argument's
 * tensor-table entry. The Debugger's Python launch path (python/flagprism/_launch.py, through
 * the extension) and its replayed launch (python/ext/dbgfast.c) both call these, so the two
 * cannot size or describe a buffer differently (docs/formats/record-format.md).
 */

#include <string.h>

#include <flagprism/debug.h>

int fp_dbg_buffer_layout(const struct fp_dbg_buffer_spec *spec, struct fp_dbg_buffer_layout *out)
{
	int64_t per, slots, arena, prefix, total, cap;

	if (!spec || !out || spec->programs < 0 || spec->records_per_program < 0 ||
	    spec->dump_records_per_program < 0 || spec->nparams > FP_DBG_MAX_PARAMS ||
	    spec->nchecks > FP_DBG_MAX_CHECKS)
		return FP_EINVAL;
	per = spec->programs > 1 ? spec->programs : 1;
	if (!spec->records) {
		slots = 0; /* check mode: the checks fold into the check area */
	} else if (spec->record_capacity >= 0) {
		slots = spec->record_capacity / per;
	} else {
		cap = FP_DBG_MAX_RECORD_BYTES / (FP_DBG_RECORD_WORDS * 8 * per);
		slots = spec->records_per_program < cap ? spec->records_per_program : cap;
	}
	if (!spec->dumps) {
		arena = 0;
	} else if (spec->dump_capacity >= 0) {
		arena = spec->dump_capacity;
	} else {
		int64_t want;

		if (__builtin_mul_overflow(spec->programs, spec->dump_records_per_program, &want) ||
		    __builtin_mul_overflow(want, (int64_t)FP_DBG_DUMP_WORDS_PER_RECORD, &want) ||
		    want > FP_DBG_MAX_DUMP_WORDS)
			want = FP_DBG_MAX_DUMP_WORDS;
		arena = want < 1 ? 1 : want;
	}
	prefix = spec->nchecks ? FP_DBG_HEADER_WORDS + FP_DBG_EXT_WORDS +
					 (int64_t)FP_DBG_ENTRY_WORDS * spec->nparams +
					 (int64_t)FP_DBG_SLOT_WORDS * spec->nchecks :
				 FP_DBG_HEADER_WORDS;
	if (__builtin_mul_overflow(spec->programs, slots, &total) ||
	    __builtin_mul_overflow(total, (int64_t)FP_DBG_RECORD_WORDS, &total) ||
	    __builtin_add_overflow(total, prefix, &total) ||
	    __builtin_add_overflow(total, arena, &total) || total > INT64_MAX / 8)
		return FP_ELIMIT;
	out->slots = slots;
	out->arena_words = arena;
	out->prefix_words = prefix;
	out->total_words = total;
	out->host_words = spec->nchecks ? (size_t)(FP_DBG_HEADER_WORDS + FP_DBG_EXT_WORDS +
						   FP_DBG_ENTRY_WORDS * spec->nparams) :
					  FP_DBG_HEADER_WORDS;
	return FP_OK;
}

int fp_dbg_buffer_header(const struct fp_dbg_buffer_spec *spec,
			 const struct fp_dbg_buffer_layout *layout, int64_t *words, size_t cap)
{
	uint64_t flags;

	if (!spec || !layout || !words)
		return FP_EINVAL;
	if (cap < layout->host_words)
		return FP_ELIMIT;
	/* A twin that dumps has an arena even of 0 words (dump_capacity=0): its dump helper still
	 * advances the cursor, and the decoder counts what did not fit as dump overflow. */
	flags = (spec->dumps ? FP_DBG_FLAG_DUMP_ARENA : 0) |
		(spec->nchecks ? FP_DBG_FLAG_CHECKS : 0);
	memset(words, 0, layout->host_words * sizeof(*words));
	words[0] = (int64_t)FP_DBG_MAGIC;
	words[1] =
		(int64_t)((uint64_t)FP_DBG_FORMAT_VERSION | ((uint64_t)FP_DBG_RECORD_WORDS << 16) |
			  ((uint64_t)FP_DBG_HEADER_WORDS << 32) | (flags << 48));
	words[2] = layout->slots;
	words[3] = spec->programs;
	words[6] = layout->arena_words;
	words[7] = spec->nsites;
	if (spec->nchecks) {
		words[8] = spec->nparams;
		words[9] = spec->nchecks;
		words[10] = spec->suppress ? 1 : 0;
		words[11] = layout->prefix_words;
	}
	return FP_OK;
}

int fp_dbg_table_entry(uint64_t data_ptr, uint32_t element_size, size_t ndim, const int64_t *shape,
		       const int64_t *strides, bool has_storage, uint64_t storage_ptr,
		       uint64_t storage_bytes, uint64_t out[4])
{
	struct fp_dbg_arg arg;
	int st;

	if (!out)
		return FP_EINVAL;
	out[0] = out[1] = out[2] = out[3] = 0;
	memset(&arg, 0, sizeof(arg));
	if ((st = fp_dbg_arg_set_view(&arg, data_ptr, element_size, ndim, shape, strides)))
		return st;
	if (has_storage && storage_bytes > UINT64_MAX - storage_ptr)
		has_storage = false; /* no storage this can name: the view stands for it */
	out[0] = arg.view_lo;
	out[1] = arg.view_hi;
	out[2] = has_storage ? storage_ptr : arg.view_lo;
	out[3] = has_storage ? storage_ptr + storage_bytes : arg.view_hi;
	return FP_OK;
}
