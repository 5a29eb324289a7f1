/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Source lines of a CUDA cubin: FlagPrism's own reader of the cubin's ELF container and of the
 * DWARF line program in its `.debug_line` section (versions 2 to 4, what ptxas writes), which
 * maps SASS offsets inside each kernel to the source lines of the PTX `.loc` directives. For a
 * Triton kernel those are the Python file and line of the `@triton.jit` function (Triton
 * compiles with `-lineinfo` unless TRITON_DISABLE_LINE_INFO=1). The PC sampling of the CUPTI
 * backend uses it to put samples on Triton source lines. Not a disassembler and not a general
 * DWARF reader: no debug_info, no inline chains, no `.nv_debug_line_sass` (SASS -> PTX lines).
 *
 * The input is untrusted: every read is bounds-checked, every table capped, and a malformed
 * cubin is rejected with FP_EFORMAT and a diagnostic naming the byte offset in the file.
 */
#ifndef FP_IR_CUBIN_LINES_INTERNAL_H
#define FP_IR_CUBIN_LINES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flagprism/status.h>

#define FP_CUBIN_MAX_SIZE ((size_t)1 << 30)  /* bytes of one cubin */
#define FP_CUBIN_MAX_ROWS ((size_t)1 << 22)  /* line-table rows kept */
#define FP_CUBIN_MAX_FILES ((size_t)1 << 16) /* file entries, all units together */
#define FP_CUBIN_MAX_FUNCS ((size_t)1 << 16) /* functions (kernels and device functions) */

/* The line table of one cubin; heap object, fp_cubin_lines_free(). */
struct fp_cubin_lines;

/* Where a PC comes from. Strings are borrowed from the table until it is freed. */
struct fp_cubin_loc {
	const char *function; /* the function whose code holds the PC (its ELF symbol) */
	const char *dir;      /* directory of the file, "" when the table names none */
	const char *file;     /* file name as the line program writes it (may be absolute) */
	uint32_t line;        /* 1-based; 0 when the compiler marked the code as having no line */
	uint64_t pc_lo;       /* the row's range [pc_lo, pc_hi) inside the function */
	uint64_t pc_hi;
};

/**
 * Read the line table of the cubin `data` (`len` bytes; ELF64 little-endian, as ptxas writes
 * them). The bytes are not kept. A cubin without `.debug_line` (compiled without line info) is
 * valid: the table is then empty (fp_cubin_lines_has_lines() false). Line-program addresses are
 * tied to their function through the `.rela.debug_line` / `.rel.debug_line` relocations of the
 * DW_LNE_set_address operands; without relocations, a cubin with exactly one function's code
 * section gets that function.
 *
 * FP_OK and *out (free it with fp_cubin_lines_free()); FP_EINVAL (NULL arguments);
 * FP_EFORMAT (not an ELF64 little-endian file, a section or record outside the file, a bad
 * line program: diag names the byte offset in `data`); FP_ENOTSUP (DWARF 5 or later line
 * tables, 64-bit DWARF); FP_ELIMIT (over one of the caps above); FP_ENOMEM. Nothing is written
 * to *out on failure.
 */
int fp_cubin_lines_parse(const void *data, size_t len, struct fp_cubin_lines **out,
			 struct fp_diag *diag);

/** Free the table; NULL is a no-op. */
void fp_cubin_lines_free(struct fp_cubin_lines *cl);

/** Whether the cubin had a line table with at least one row. */
bool fp_cubin_lines_has_lines(const struct fp_cubin_lines *cl);

/** Rows of the table (each a [pc_lo, pc_hi) range of one function). */
size_t fp_cubin_lines_count(const struct fp_cubin_lines *cl);

/** Row `i` (0 <= i < count) in (function, pc) order. FP_OK or FP_EINVAL. */
int fp_cubin_lines_row(const struct fp_cubin_lines *cl, size_t i, struct fp_cubin_loc *out);

/**
 * The source of byte offset `pc` in function `function` (the kernel's symbol name, as CUPTI's
 * PC sampling reports it). FP_OK and *out; FP_ENOENT when the function has no rows or `pc` is
 * outside every range of it; FP_EINVAL.
 */
int fp_cubin_lines_lookup(const struct fp_cubin_lines *cl, const char *function, uint64_t pc,
			  struct fp_cubin_loc *out);

#endif /* FP_IR_CUBIN_LINES_INTERNAL_H */
