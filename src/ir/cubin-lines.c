/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The line table of a CUDA cubin (src/ir/cubin-lines-internal.h): a bounds-checked reader of the
 * ELF64 container (section headers, the symbol table, the relocations of `.debug_line`) and a
 * decoder of DWARF 2-4 line programs, turned into sorted [pc_lo, pc_hi) ranges per function so
 * that a PC-sampling record (function name, PC offset) finds its source line by binary search.
 * Every read goes through the cursor helpers below; everything found is capped. Not here: DWARF
 * 5 line tables (ptxas writes version 2), `.debug_info`, inline chains, SASS disassembly.
 */
#include "fp-setup.h"

#include <flagprism/alloc.h>

#include "core/core-internal.h"
#include "ir/cubin-lines-internal.h"

/* ELF constants (System V gABI). */
#define EHDR_SIZE 64u
#define SHDR_SIZE 64u
#define SYM_SIZE 24u
#define RELA_SIZE 24u
#define REL_SIZE 16u
#define SHT_SYMTAB 2u
#define SHT_RELA 4u
#define SHT_NOBITS 8u
#define SHT_REL 9u
#define STT_FUNC 2u
#define STT_SECTION 3u
#define SHN_LORESERVE 0xff00u

/* DWARF line-program opcodes. */
#define DW_LNS_copy 1
#define DW_LNS_advance_pc 2
#define DW_LNS_advance_line 3
#define DW_LNS_set_file 4
#define DW_LNS_const_add_pc 8
#define DW_LNS_fixed_advance_pc 9
#define DW_LNE_end_sequence 1
#define DW_LNE_set_address 2
#define DW_LNE_define_file 3

#define NO_FUNC UINT32_MAX
#define MAX_STRINGS ((size_t)64 << 20) /* bytes of names kept */
#define MAX_RELOCS ((size_t)1 << 20)

struct file_entry {
	uint32_t dir, name; /* offsets into the string pool */
};

struct range {
	uint32_t func, file, line;
	uint64_t lo, hi;
};

struct fp_cubin_lines {
	char *str; /* pool: offset 0 is "" */
	size_t nstr, capstr;
	uint32_t *funcs; /* name offsets */
	size_t nfunc, capfunc;
	struct file_entry *files;
	size_t nfile, capfile;
	struct range *rows;
	size_t nrow, caprow;
};

struct section {
	uint32_t name, type, link, info;
	uint64_t off, size, entsize;
};

struct symbol {
	uint32_t name;
	uint8_t type;
	uint16_t shndx;
	uint64_t value, size;
};

/* A relocation of a DW_LNE_set_address operand: where it is in .debug_line and what it names. */
struct reloc {
	uint64_t where;
	uint32_t sym;
	int64_t addend;
	bool rela;
};

struct reader {
	const uint8_t *data;
	size_t len;
	struct fp_diag *diag;
	struct section *sec;
	size_t nsec;
	struct symbol *syms;
	size_t nsym;
	const char *symstr;
	uint64_t symstr_len;
	struct reloc *rel;
	size_t nrel;
	uint32_t *sec_func; /* section index -> function id, NO_FUNC */
	uint32_t only_func; /* the only function with code, or NO_FUNC */
	struct fp_cubin_lines *cl;
};

/* A bounded cursor over [pos, end) of the file. */
struct cur {
	const uint8_t *d;
	uint64_t pos, end;
};

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

static uint64_t rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) | ((uint64_t)rd32(p + 4) << 32);
}

static int fmt_err(struct reader *r, uint64_t off, const char *what)
{
	return fp_diag_set(r->diag, FP_EFORMAT, off, "cubin: %s", what);
}

static int need(struct reader *r, struct cur *c, uint64_t n, const char *what)
{
	if (c->end - c->pos < n)
		return fp_diag_set(r->diag, FP_EFORMAT, c->pos,
				   "cubin: truncated %s (%" PRIu64 " bytes needed, %" PRIu64
				   " left)",
				   what, n, c->end - c->pos);
	return FP_OK;
}

static int get_u8(struct reader *r, struct cur *c, const char *what, uint8_t *v)
{
	int rc = need(r, c, 1, what);

	if (!rc)
		*v = c->d[c->pos++];
	return rc;
}

static int get_u16(struct reader *r, struct cur *c, const char *what, uint16_t *v)
{
	int rc = need(r, c, 2, what);

	if (!rc) {
		*v = rd16(c->d + c->pos);
		c->pos += 2;
	}
	return rc;
}

static int get_u32(struct reader *r, struct cur *c, const char *what, uint32_t *v)
{
	int rc = need(r, c, 4, what);

	if (!rc) {
		*v = rd32(c->d + c->pos);
		c->pos += 4;
	}
	return rc;
}

/*
 * A LEB128 number (DWARF 7.6); `sign`: signed, sign-extended from its last byte. An unsigned one
 * must fit 64 bits; a signed one may not run past its tenth byte.
 */
static int get_leb(struct reader *r, struct cur *c, const char *what, bool sign, uint64_t *v)
{
	uint64_t x = 0, start = c->pos;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (c->pos >= c->end)
			return fp_diag_set(r->diag, FP_EFORMAT, start, "cubin: truncated LEB128 %s",
					   what);
		b = c->d[c->pos++];
		if (shift >= 64 || (!sign && shift == 63 && (b & 0x7e)))
			return fp_diag_set(r->diag, FP_EFORMAT, start,
					   "cubin: LEB128 %s does not fit 64 bits", what);
		x |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (sign && shift < 64 && (b & 0x40))
		x |= ~(uint64_t)0 << shift;
	*v = x;
	return FP_OK;
}

static int get_uleb(struct reader *r, struct cur *c, const char *what, uint64_t *v)
{
	return get_leb(r, c, what, false, v);
}

static int get_sleb(struct reader *r, struct cur *c, const char *what, int64_t *v)
{
	uint64_t x = 0; /* = 0: gcc -O3 cannot see get_leb() set it on success */
	int rc = get_leb(r, c, what, true, &x);

	if (!rc)
		memcpy(v, &x, sizeof(*v));
	return rc;
}

/* A NUL-terminated string inside the cursor; *s points into the file. */
static int get_str(struct reader *r, struct cur *c, const char *what, const char **s, size_t *n)
{
	const uint8_t *p = c->d + c->pos;
	const void *z = memchr(p, 0, (size_t)(c->end - c->pos));

	if (!z)
		return fp_diag_set(r->diag, FP_EFORMAT, c->pos, "cubin: unterminated %s", what);
	*s = (const char *)p;
	*n = (size_t)((const uint8_t *)z - p);
	c->pos += *n + 1;
	return FP_OK;
}

/* ---- the table ------------------------------------------------------------------------------- */

static int add_str(struct reader *r, const char *s, size_t n, uint32_t *off)
{
	struct fp_cubin_lines *cl = r->cl;
	int rc;

	if (!n) {
		*off = 0;
		return FP_OK;
	}
	rc = fp__grow((void **)&cl->str, &cl->capstr, cl->nstr + n + 1, 1, MAX_STRINGS);
	if (rc)
		return fp_diag_set(r->diag, rc, 0, "cubin: more than %zu bytes of names",
				   MAX_STRINGS);
	memcpy(cl->str + cl->nstr, s, n);
	cl->str[cl->nstr + n] = '\0';
	*off = (uint32_t)cl->nstr;
	cl->nstr += n + 1;
	return FP_OK;
}

static int add_file(struct reader *r, uint32_t dir, const char *name, size_t n, uint64_t at)
{
	struct fp_cubin_lines *cl = r->cl;
	struct file_entry *f;
	int rc = fp__grow((void **)&cl->files, &cl->capfile, cl->nfile + 1, sizeof(*cl->files),
			  FP_CUBIN_MAX_FILES);

	if (rc)
		return fp_diag_set(r->diag, rc, at, "cubin: more than %zu file entries",
				   FP_CUBIN_MAX_FILES);
	f = &cl->files[cl->nfile];
	f->dir = dir;
	rc = add_str(r, name, n, &f->name);
	if (!rc)
		cl->nfile++;
	return rc;
}

static int add_range(struct reader *r, const struct range *g, uint64_t at)
{
	struct fp_cubin_lines *cl = r->cl;
	int rc = fp__grow((void **)&cl->rows, &cl->caprow, cl->nrow + 1, sizeof(*cl->rows),
			  FP_CUBIN_MAX_ROWS);

	if (rc)
		return fp_diag_set(r->diag, rc, at, "cubin: more than %zu line-table rows",
				   FP_CUBIN_MAX_ROWS);
	cl->rows[cl->nrow++] = *g;
	return FP_OK;
}

/* ---- ELF ------------------------------------------------------------------------------------- */

static const char *sec_name(struct reader *r, const struct section *shstr, uint32_t name)
{
	const char *s;

	if (!shstr || name >= shstr->size)
		return NULL;
	s = (const char *)r->data + shstr->off + name;
	return memchr(s, 0, (size_t)(shstr->size - name)) ? s : NULL;
}

static int read_sections(struct reader *r, uint16_t *shstrndx)
{
	uint64_t shoff;
	uint16_t shentsize, shnum;
	size_t i;

	if (r->len < EHDR_SIZE || memcmp(r->data, "\177ELF", 4) != 0)
		return fmt_err(r, 0, "not an ELF file (bad magic)");
	if (r->data[4] != 2)
		return fmt_err(r, 4, "not a 64-bit ELF file");
	if (r->data[5] != 1)
		return fmt_err(r, 5, "not a little-endian ELF file");
	shoff = rd64(r->data + 0x28);
	shentsize = rd16(r->data + 0x3a);
	shnum = rd16(r->data + 0x3c);
	*shstrndx = rd16(r->data + 0x3e);
	if (shnum == 0)
		return fmt_err(r, 0x3c, "no section headers (or extended numbering)");
	if (shentsize != SHDR_SIZE)
		return fmt_err(r, 0x3a, "section header size is not 64");
	if (shoff > r->len || (r->len - shoff) / SHDR_SIZE < shnum)
		return fmt_err(r, 0x28, "section headers outside the file");
	if (*shstrndx >= shnum)
		return fmt_err(r, 0x3e, "section-name table index out of range");
	r->sec = fp_calloc(shnum, sizeof(*r->sec));
	if (!r->sec)
		return fp_diag_set(r->diag, FP_ENOMEM, 0, "cubin: section table");
	r->nsec = shnum;
	for (i = 0; i < shnum; i++) {
		const uint8_t *h = r->data + shoff + i * SHDR_SIZE;
		struct section *s = &r->sec[i];

		s->name = rd32(h);
		s->type = rd32(h + 4);
		s->off = rd64(h + 24);
		s->size = rd64(h + 32);
		s->link = rd32(h + 40);
		s->info = rd32(h + 44);
		s->entsize = rd64(h + 56);
		/* section 0 too: a hostile e_shstrndx may name it */
		if (s->type != SHT_NOBITS && (s->off > r->len || s->size > r->len - s->off))
			return fp_diag_set(r->diag, FP_EFORMAT, shoff + i * SHDR_SIZE,
					   "cubin: section %zu lies outside the file", i);
	}
	return FP_OK;
}

static int read_symbols(struct reader *r)
{
	const struct section *st = NULL, *ss;
	size_t i;

	for (i = 1; i < r->nsec; i++)
		if (r->sec[i].type == SHT_SYMTAB) {
			st = &r->sec[i];
			break;
		}
	if (!st)
		return FP_OK;
	if (st->link == 0 || st->link >= r->nsec || r->sec[st->link].type == SHT_NOBITS)
		return fmt_err(r, st->off, "symbol table names no string table");
	ss = &r->sec[st->link];
	r->symstr = (const char *)r->data + ss->off;
	r->symstr_len = ss->size;
	r->nsym = (size_t)(st->size / SYM_SIZE);
	if (!r->nsym)
		return FP_OK;
	r->syms = fp_calloc(r->nsym, sizeof(*r->syms));
	if (!r->syms)
		return fp_diag_set(r->diag, FP_ENOMEM, 0, "cubin: symbol table");
	for (i = 0; i < r->nsym; i++) {
		const uint8_t *p = r->data + st->off + i * SYM_SIZE;

		r->syms[i].name = rd32(p);
		r->syms[i].type = p[4] & 0xf;
		r->syms[i].shndx = rd16(p + 6);
		r->syms[i].value = rd64(p + 8);
		r->syms[i].size = rd64(p + 16);
	}
	return FP_OK;
}

static const char *sym_name(struct reader *r, uint32_t name, size_t *n)
{
	const char *s;
	const void *z;

	if (name >= r->symstr_len)
		return NULL;
	s = r->symstr + name;
	z = memchr(s, 0, (size_t)(r->symstr_len - name));
	if (!z)
		return NULL;
	*n = (size_t)((const char *)z - s);
	return s;
}

static int add_func(struct reader *r, const char *name, size_t n, uint32_t *id)
{
	struct fp_cubin_lines *cl = r->cl;
	size_t i;
	int rc;

	for (i = 0; i < cl->nfunc; i++) {
		const char *f = cl->str + cl->funcs[i];

		if (strlen(f) == n && memcmp(f, name, n) == 0) {
			*id = (uint32_t)i;
			return FP_OK;
		}
	}
	rc = fp__grow((void **)&cl->funcs, &cl->capfunc, cl->nfunc + 1, sizeof(*cl->funcs),
		      FP_CUBIN_MAX_FUNCS);
	if (rc)
		return fp_diag_set(r->diag, rc, 0, "cubin: more than %zu functions",
				   FP_CUBIN_MAX_FUNCS);
	rc = add_str(r, name, n, &cl->funcs[cl->nfunc]);
	if (rc)
		return rc;
	*id = (uint32_t)cl->nfunc++;
	return FP_OK;
}

/*
 * Functions: one per FUNC symbol with a section (ptxas gives each kernel and device function
 * its own `.text.<name>` section); sections named `.text.<name>` without such a symbol get the
 * name from the section.
 */
static int find_functions(struct reader *r, const struct section *shstr)
{
	size_t i, n, ncode = 0;
	uint32_t id;
	int rc;

	r->sec_func = fp_calloc(r->nsec, sizeof(*r->sec_func));
	if (!r->sec_func)
		return fp_diag_set(r->diag, FP_ENOMEM, 0, "cubin: function table");
	for (i = 0; i < r->nsec; i++)
		r->sec_func[i] = NO_FUNC;
	for (i = 0; i < r->nsym; i++) {
		const struct symbol *s = &r->syms[i];
		const char *name;

		if (s->type != STT_FUNC || !s->shndx || s->shndx >= SHN_LORESERVE ||
		    s->shndx >= r->nsec)
			continue;
		name = sym_name(r, s->name, &n);
		if (!name || !n)
			continue;
		rc = add_func(r, name, n, &id);
		if (rc)
			return rc;
		if (r->sec_func[s->shndx] == NO_FUNC)
			r->sec_func[s->shndx] = id;
	}
	r->only_func = NO_FUNC;
	for (i = 1; i < r->nsec; i++) {
		const char *name = sec_name(r, shstr, r->sec[i].name);

		if (!name || strncmp(name, ".text.", 6) != 0 || !name[6])
			continue;
		if (r->sec_func[i] == NO_FUNC) {
			rc = add_func(r, name + 6, strlen(name + 6), &r->sec_func[i]);
			if (rc)
				return rc;
		}
		ncode++;
		r->only_func = r->sec_func[i];
	}
	if (ncode != 1)
		r->only_func = NO_FUNC;
	return FP_OK;
}

static int read_relocs(struct reader *r, size_t line_sec)
{
	size_t i, j, total = 0;

	for (i = 1; i < r->nsec; i++) {
		const struct section *s = &r->sec[i];

		if ((s->type == SHT_RELA || s->type == SHT_REL) && s->info == line_sec)
			total += (size_t)(s->size / (s->type == SHT_RELA ? RELA_SIZE : REL_SIZE));
	}
	if (!total)
		return FP_OK;
	if (total > MAX_RELOCS)
		return fp_diag_set(r->diag, FP_ELIMIT, 0,
				   "cubin: more than %zu line-table relocations", MAX_RELOCS);
	r->rel = fp_calloc(total, sizeof(*r->rel));
	if (!r->rel)
		return fp_diag_set(r->diag, FP_ENOMEM, 0, "cubin: relocations");
	for (i = 1; i < r->nsec; i++) {
		const struct section *s = &r->sec[i];
		size_t esz, n;

		if ((s->type != SHT_RELA && s->type != SHT_REL) || s->info != line_sec)
			continue;
		esz = s->type == SHT_RELA ? RELA_SIZE : REL_SIZE;
		n = (size_t)(s->size / esz);
		for (j = 0; j < n; j++) {
			const uint8_t *p = r->data + s->off + j * esz;
			struct reloc *x = &r->rel[r->nrel++];
			uint64_t a;

			x->where = rd64(p);
			x->sym = (uint32_t)(rd64(p + 8) >> 32);
			x->rela = s->type == SHT_RELA;
			a = x->rela ? rd64(p + 16) : 0;
			memcpy(&x->addend, &a, sizeof(a));
			if (x->sym >= r->nsym)
				return fp_diag_set(r->diag, FP_EFORMAT, s->off + j * esz,
						   "cubin: relocation names symbol %" PRIu32
						   " of %zu",
						   x->sym, r->nsym);
		}
	}
	return FP_OK;
}

/* ---- the line program ------------------------------------------------------------------------ */

struct lstate {
	uint64_t addr;
	uint64_t file;
	int64_t line;
	uint32_t func;
	bool have; /* a row is pending: it extends to the next row's address */
	struct range pend;
	uint32_t fbase; /* global index of this unit's file 1 */
	uint32_t nfiles;
};

/*
 * Resolve the DW_LNE_set_address operand at section offset `where` (file offset `at`): the
 * function it points into and the address relative to that function's start.
 */
static int set_address(struct reader *r, struct lstate *ls, uint64_t where, uint64_t raw,
		       uint64_t at)
{
	size_t i;

	for (i = 0; i < r->nrel; i++) {
		const struct reloc *x = &r->rel[i];
		const struct symbol *s;
		uint64_t base;

		if (x->where != where)
			continue;
		s = &r->syms[x->sym];
		if (!s->shndx || s->shndx >= r->nsec || s->shndx >= SHN_LORESERVE)
			return fmt_err(r, at,
				       "set_address relocated against a symbol with no section");
		ls->func = r->sec_func[s->shndx];
		/* A FUNC symbol's own address is the start; a SECTION symbol's is the section's. */
		base = s->type == STT_FUNC ? s->value : 0;
		ls->addr = (s->value - base) + (x->rela ? (uint64_t)x->addend : raw);
		if (s->type != STT_FUNC) {
			/* find the function of that section holding the address */
			size_t k;

			for (k = 0; k < r->nsym; k++) {
				const struct symbol *f = &r->syms[k];

				if (f->type == STT_FUNC && f->shndx == s->shndx &&
				    f->value <= ls->addr &&
				    (ls->addr - f->value < f->size || !f->size)) {
					ls->addr -= f->value;
					break;
				}
			}
		}
		return FP_OK;
	}
	ls->func = r->only_func;
	ls->addr = raw;
	return FP_OK;
}

static int emit_row(struct reader *r, struct lstate *ls, bool end, uint64_t at)
{
	int rc;

	if (ls->have && ls->addr < ls->pend.lo)
		return fmt_err(r, at, "line-table address goes backwards inside a sequence");
	if (ls->have && ls->addr > ls->pend.lo && ls->pend.func != NO_FUNC) {
		ls->pend.hi = ls->addr;
		rc = add_range(r, &ls->pend, at);
		if (rc)
			return rc;
	}
	if (end) {
		ls->have = false;
		return FP_OK;
	}
	if (ls->file < 1 || ls->file > ls->nfiles)
		return fp_diag_set(r->diag, FP_EFORMAT, at,
				   "cubin: line-table row names file %" PRIu64
				   ", the unit has %" PRIu32,
				   ls->file, ls->nfiles);
	if (ls->line < 0 || ls->line > (int64_t)UINT32_MAX)
		return fp_diag_set(r->diag, FP_EFORMAT, at,
				   "cubin: line-table line %" PRId64 " out of range", ls->line);
	ls->pend.func = ls->func;
	ls->pend.file = ls->fbase + (uint32_t)(ls->file - 1);
	ls->pend.line = (uint32_t)ls->line;
	ls->pend.lo = ls->addr;
	ls->have = true;
	return FP_OK;
}

static void reset_state(struct lstate *ls)
{
	ls->addr = 0;
	ls->file = 1;
	ls->line = 1;
	ls->func = NO_FUNC;
	ls->have = false;
}

/* The unit's file table; c covers the header after the standard opcode lengths. */
static int unit_files(struct reader *r, struct cur *c, struct lstate *ls)
{
	uint32_t dirs[1024];
	/* = 0 / NULL: gcc -O3 cannot see get_str() set them on success */
	size_t ndir = 1, n = 0;
	const char *s = NULL;
	int rc;

	dirs[0] = 0;
	for (;;) {
		rc = get_str(r, c, "include directory", &s, &n);
		if (rc)
			return rc;
		if (!n)
			break;
		if (ndir >= FP_ARRAY_SIZE(dirs))
			return fp_diag_set(r->diag, FP_ELIMIT, c->pos,
					   "cubin: more than %zu include directories",
					   FP_ARRAY_SIZE(dirs) - 1);
		rc = add_str(r, s, n, &dirs[ndir]);
		if (rc)
			return rc;
		ndir++;
	}
	ls->fbase = (uint32_t)r->cl->nfile;
	ls->nfiles = 0;
	for (;;) {
		uint64_t dir, skip, at = c->pos;

		rc = get_str(r, c, "file name", &s, &n);
		if (rc)
			return rc;
		if (!n)
			break;
		rc = get_uleb(r, c, "directory index", &dir);
		if (!rc)
			rc = get_uleb(r, c, "file time", &skip);
		if (!rc)
			rc = get_uleb(r, c, "file size", &skip);
		if (rc)
			return rc;
		if (dir >= ndir)
			return fp_diag_set(r->diag, FP_EFORMAT, at,
					   "cubin: file names directory %" PRIu64 " of %zu", dir,
					   ndir - 1);
		rc = add_file(r, dirs[dir], s, n, at);
		if (rc)
			return rc;
		ls->nfiles++;
	}
	return FP_OK;
}

static int extended_op(struct reader *r, struct cur *c, struct lstate *ls, uint64_t sec_off,
		       uint64_t at)
{
	/* = 0 / NULL: gcc -O3 cannot see the readers set them on success */
	uint64_t len = 0, end, raw = 0, skip;
	uint8_t sub;
	const char *s = NULL;
	size_t n = 0;
	int rc;

	rc = get_uleb(r, c, "extended opcode length", &len);
	if (rc)
		return rc;
	if (!len || len > c->end - c->pos)
		return fmt_err(r, at, "extended opcode length out of range");
	end = c->pos + len;
	sub = c->d[c->pos++];
	switch (sub) {
	case DW_LNE_end_sequence:
		rc = emit_row(r, ls, true, at);
		reset_state(ls);
		break;
	case DW_LNE_set_address:
		if (len - 1 != 8 && len - 1 != 4)
			return fmt_err(r, at, "set_address operand is not 4 or 8 bytes");
		raw = len - 1 == 8 ? rd64(c->d + c->pos) : rd32(c->d + c->pos);
		if (ls->have)
			return fmt_err(r, at, "set_address inside a sequence");
		rc = set_address(r, ls, c->pos - sec_off, raw, at);
		break;
	case DW_LNE_define_file: {
		struct cur sub_c = {c->d, c->pos, end};
		uint64_t dir;

		rc = get_str(r, &sub_c, "file name", &s, &n);
		if (!rc)
			rc = get_uleb(r, &sub_c, "directory index", &dir);
		if (!rc)
			rc = get_uleb(r, &sub_c, "file time", &skip);
		if (!rc)
			rc = get_uleb(r, &sub_c, "file size", &skip);
		if (!rc && r->cl->nfile != (size_t)ls->fbase + ls->nfiles)
			rc = fmt_err(r, at, "define_file after another unit's files");
		/* the directory table is gone by now: keep the file without one */
		if (!rc)
			rc = add_file(r, 0, s, n, at);
		if (!rc)
			ls->nfiles++;
		break;
	}
	default: /* set_discriminator and vendor opcodes: not needed for lines */
		break;
	}
	c->pos = end;
	return rc;
}

static int decode_unit(struct reader *r, const struct section *ls_sec, struct cur *all)
{
	uint64_t start = all->pos, unit_end, prog;
	uint32_t unit_len, hdr_len;
	uint16_t version;
	uint8_t min_inst, max_ops = 1, def_stmt, lrange, opbase, lens[256];
	int8_t lbase;
	struct lstate ls;
	struct cur c;
	unsigned i;
	int rc;

	rc = get_u32(r, all, "line-table unit length", &unit_len);
	if (rc)
		return rc;
	if (unit_len == 0xffffffffu)
		return fp_diag_set(r->diag, FP_ENOTSUP, start,
				   "cubin: 64-bit DWARF line tables are not supported");
	if (unit_len >= 0xfffffff0u || unit_len > all->end - all->pos)
		return fmt_err(r, start, "line-table unit longer than .debug_line");
	unit_end = all->pos + unit_len;
	c.d = all->d;
	c.pos = all->pos;
	c.end = unit_end;
	all->pos = unit_end;
	rc = get_u16(r, &c, "line-table version", &version);
	if (rc)
		return rc;
	if (version >= 5 && version <= 6)
		return fp_diag_set(r->diag, FP_ENOTSUP, c.pos - 2,
				   "cubin: DWARF %u line tables are not supported (2 to 4 are)",
				   version);
	if (version < 2 || version > 4)
		return fp_diag_set(r->diag, FP_EFORMAT, c.pos - 2,
				   "cubin: line-table version %u is not DWARF 2 to 4", version);
	rc = get_u32(r, &c, "header length", &hdr_len);
	if (rc)
		return rc;
	if (hdr_len > c.end - c.pos)
		return fmt_err(r, c.pos - 4, "line-table header longer than its unit");
	prog = c.pos + hdr_len;
	rc = get_u8(r, &c, "minimum instruction length", &min_inst);
	if (!rc && version >= 4)
		rc = get_u8(r, &c, "maximum operations per instruction", &max_ops);
	if (!rc)
		rc = get_u8(r, &c, "default is_stmt", &def_stmt);
	if (!rc)
		rc = get_u8(r, &c, "line base", (uint8_t *)&lbase);
	if (!rc)
		rc = get_u8(r, &c, "line range", &lrange);
	if (!rc)
		rc = get_u8(r, &c, "opcode base", &opbase);
	if (rc)
		return rc;
	(void)def_stmt;
	if (max_ops != 1)
		return fp_diag_set(r->diag, FP_ENOTSUP, start,
				   "cubin: VLIW line tables (%u operations per instruction)",
				   max_ops);
	if (!lrange)
		return fmt_err(r, c.pos - 2, "line range 0");
	if (!opbase)
		return fmt_err(r, c.pos - 1, "opcode base 0");
	memset(lens, 0, sizeof(lens));
	for (i = 1; i < opbase; i++) {
		rc = get_u8(r, &c, "standard opcode lengths", &lens[i]);
		if (rc)
			return rc;
	}
	c.end = prog; /* the file table must end inside the header */
	rc = unit_files(r, &c, &ls);
	if (rc)
		return rc;
	c.pos = prog;
	c.end = unit_end;
	reset_state(&ls);
	while (c.pos < c.end) {
		/*
		 * An operand is used only when its read succeeded; the zeros are for compilers
		 * (gcc 13 at -O2) that cannot see that and warn -Wmaybe-uninitialized.
		 */
		uint64_t at = c.pos, u = 0;
		int64_t sv = 0;
		uint16_t h = 0;
		uint8_t op = c.d[c.pos++];

		if (op >= opbase) {
			unsigned adj = (unsigned)(op - opbase);

			ls.addr += (uint64_t)(adj / lrange) * min_inst;
			ls.line += lbase + (int)(adj % lrange);
			rc = emit_row(r, &ls, false, at);
		} else if (op == 0) {
			rc = extended_op(r, &c, &ls, ls_sec->off, at);
		} else if (op == DW_LNS_copy) {
			rc = emit_row(r, &ls, false, at);
		} else if (op == DW_LNS_advance_pc) {
			rc = get_uleb(r, &c, "advance_pc operand", &u);
			if (!rc)
				ls.addr += u * min_inst;
		} else if (op == DW_LNS_advance_line) {
			rc = get_sleb(r, &c, "advance_line operand", &sv);
			if (!rc && ((sv > 0 && ls.line > INT64_MAX - sv) ||
				    (sv < 0 && ls.line < INT64_MIN - sv)))
				rc = fmt_err(r, at, "line number overflows");
			if (!rc)
				ls.line += sv;
		} else if (op == DW_LNS_set_file) {
			rc = get_uleb(r, &c, "set_file operand", &ls.file);
		} else if (op == DW_LNS_const_add_pc) {
			ls.addr += (uint64_t)((255u - opbase) / lrange) * min_inst;
		} else if (op == DW_LNS_fixed_advance_pc) {
			rc = get_u16(r, &c, "fixed_advance_pc operand", &h);
			if (!rc)
				ls.addr += h;
		} else {
			/* other standard opcodes: skip their ULEB128 operands */
			for (i = 0; !rc && i < lens[op]; i++)
				rc = get_uleb(r, &c, "standard opcode operand", &u);
		}
		if (rc)
			return rc;
	}
	if (ls.have)
		return fmt_err(r, unit_end, "line-table unit ends inside a sequence");
	return FP_OK;
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

static int parse(struct reader *r)
{
	const struct section *shstr, *line = NULL;
	uint16_t shstrndx = 0;
	size_t i, line_idx = 0;
	struct cur all;
	int rc;

	rc = read_sections(r, &shstrndx);
	if (rc)
		return rc;
	shstr = &r->sec[shstrndx];
	if (shstr->type == SHT_NOBITS)
		return fmt_err(r, 0x3e, "section-name table has no bytes");
	for (i = 1; i < r->nsec; i++) {
		const char *n = sec_name(r, shstr, r->sec[i].name);

		if (!n)
			return fp_diag_set(r->diag, FP_EFORMAT, 0,
					   "cubin: section %zu has a name outside the name table",
					   i);
		if (strcmp(n, ".debug_line") == 0 && r->sec[i].type != SHT_NOBITS) {
			line = &r->sec[i];
			line_idx = i;
		}
	}
	rc = read_symbols(r);
	if (!rc)
		rc = find_functions(r, shstr);
	if (rc || !line)
		return rc;
	rc = read_relocs(r, line_idx);
	if (rc)
		return rc;
	for (i = 0; i < r->nrel; i++)
		if (r->rel[i].where > line->size)
			return fp_diag_set(r->diag, FP_EFORMAT, line->off,
					   "cubin: .debug_line relocation at %" PRIu64
					   " past the section",
					   r->rel[i].where);
	all.d = r->data;
	all.pos = line->off;
	all.end = line->off + line->size;
	while (all.pos < all.end) {
		rc = decode_unit(r, line, &all);
		if (rc)
			return rc;
	}
	if (r->cl->nrow)
		qsort(r->cl->rows, r->cl->nrow, sizeof(*r->cl->rows), cmp_range);
	/* one PC, one line: sequences of a function must not overlap */
	for (i = 1; i < r->cl->nrow; i++) {
		const struct range *a = &r->cl->rows[i - 1], *b = &r->cl->rows[i];

		if (a->func == b->func && b->lo < a->hi)
			return fp_diag_set(
				r->diag, FP_EFORMAT, line->off,
				"cubin: line-table sequences overlap at offset 0x%" PRIx64
				" of function \"%s\"",
				b->lo, r->cl->str + r->cl->funcs[b->func]);
	}
	return FP_OK;
}

void fp_cubin_lines_free(struct fp_cubin_lines *cl)
{
	if (!cl)
		return;
	fp_free(cl->str);
	fp_free(cl->funcs);
	fp_free(cl->files);
	fp_free(cl->rows);
	fp_free(cl);
}

int fp_cubin_lines_parse(const void *data, size_t len, struct fp_cubin_lines **out,
			 struct fp_diag *diag)
{
	struct reader r;
	int rc;

	if (!data || !out)
		return fp_diag_set(diag, FP_EINVAL, 0, "cubin: NULL argument");
	if (len > FP_CUBIN_MAX_SIZE)
		return fp_diag_set(diag, FP_ELIMIT, 0, "cubin: larger than %zu bytes",
				   FP_CUBIN_MAX_SIZE);
	memset(&r, 0, sizeof(r));
	r.data = data;
	r.len = len;
	r.diag = diag;
	r.cl = fp_calloc(1, sizeof(*r.cl));
	if (!r.cl)
		return fp_diag_set(diag, FP_ENOMEM, 0, "cubin: line table");
	/* offset 0 of the pool is the empty string */
	rc = fp__grow((void **)&r.cl->str, &r.cl->capstr, 1, 1, MAX_STRINGS);
	if (rc) {
		rc = fp_diag_set(diag, rc, 0, "cubin: line table");
	} else {
		r.cl->str[0] = '\0';
		r.cl->nstr = 1;
		rc = parse(&r);
	}
	fp_free(r.sec);
	fp_free(r.syms);
	fp_free(r.rel);
	fp_free(r.sec_func);
	if (rc) {
		fp_cubin_lines_free(r.cl);
		return rc;
	}
	*out = r.cl;
	return FP_OK;
}

bool fp_cubin_lines_has_lines(const struct fp_cubin_lines *cl)
{
	return cl && cl->nrow > 0;
}

size_t fp_cubin_lines_count(const struct fp_cubin_lines *cl)
{
	return cl ? cl->nrow : 0;
}

static void fill(const struct fp_cubin_lines *cl, const struct range *g, struct fp_cubin_loc *o)
{
	const struct file_entry *f = &cl->files[g->file];

	o->function = cl->str + cl->funcs[g->func];
	o->dir = cl->str + f->dir;
	o->file = cl->str + f->name;
	o->line = g->line;
	o->pc_lo = g->lo;
	o->pc_hi = g->hi;
}

int fp_cubin_lines_row(const struct fp_cubin_lines *cl, size_t i, struct fp_cubin_loc *out)
{
	if (!cl || !out || i >= cl->nrow)
		return FP_EINVAL;
	fill(cl, &cl->rows[i], out);
	return FP_OK;
}

int fp_cubin_lines_lookup(const struct fp_cubin_lines *cl, const char *function, uint64_t pc,
			  struct fp_cubin_loc *out)
{
	size_t lo = 0, hi, i;
	uint32_t fid = NO_FUNC;

	if (!cl || !function || !out)
		return FP_EINVAL;
	for (i = 0; i < cl->nfunc; i++)
		if (strcmp(cl->str + cl->funcs[i], function) == 0) {
			fid = (uint32_t)i;
			break;
		}
	if (fid == NO_FUNC)
		return FP_ENOENT;
	/* the last row with (func, lo) <= (fid, pc) */
	hi = cl->nrow;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct range *g = &cl->rows[mid];

		if (g->func < fid || (g->func == fid && g->lo <= pc))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return FP_ENOENT;
	i = lo - 1;
	if (cl->rows[i].func != fid || pc >= cl->rows[i].hi)
		return FP_ENOENT;
	fill(cl, &cl->rows[i], out);
	return FP_OK;
}
