/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading Nsight Compute's CSV (include/flagprism/ncu.h): tool lines apart from CSV rows,
 * headers, the raw page's units row, launches keyed by (process, ID, kernel) on the details
 * page, values with thousands separators, SI-prefixed units, and the list of what ncu could
 * not collect. Everything is copied into the report's arena, so the input can go once parsing
 * returns. Matching to a profile is ncu-attach.c's job, the vendor file ncu-vendor.c's.
 */
#include "fp-setup.h"

#include <ctype.h>
#include <locale.h>
#include <math.h>

#include <flagprism/strbuf.h>

#include "core/core-internal.h"
#include "core/hashmap-internal.h"
#include "prof/ncu-internal.h"

/* Columns of a header that the importer reads (others are kept verbatim only). */
struct hdr {
	size_t record; /* FP_NCU_NONE: no header yet */
	enum fp_ncu_page page;
	size_t ncols;
	long id, pid, kernel, device, grid, block; /* column index or -1 */
	long section, mname, munit, mvalue;        /* details page */
	size_t units;  /* raw page: record of the units row, or FP_NCU_NONE */
	bool saw_data; /* a data row came after the header (no units row can follow) */
};

struct parse_ctx {
	struct fp_ncu_report *r;
	struct fp_csv_reader csv;
	struct hdr h;
	struct fp_intern *keys; /* details page: "pid\x1fid\x1fkernel" -> key id */
	size_t *key_launch;     /* key id -> launch */
	size_t alloc_keys, nkeys;
	size_t alloc_metric_launch;
	struct fp_intern *mids; /* "section\x1fname" -> metric identity */
	struct fp_hashmap seen; /* (launch + 1) << 32 | identity: duplicate detection */
	struct fp_diag *diag;
};

/* ---- small helpers --------------------------------------------------------------------------- */

static bool eq(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

static bool has_ci(const char *s, size_t n, const char *needle)
{
	size_t m = strlen(needle), i, j;

	for (i = 0; i + m <= n; i++) {
		for (j = 0; j < m; j++)
			if (tolower((unsigned char)s[i + j]) != tolower((unsigned char)needle[j]))
				break;
		if (j == m)
			return true;
	}
	return false;
}

static bool starts(const char *s, size_t n, const char *lit)
{
	size_t m = strlen(lit);

	return n >= m && memcmp(s, lit, m) == 0;
}

int fp__ncu_degrade(struct fp_ncu_report *r, const char *kind, const char *detail, size_t len,
		    size_t record)
{
	struct fp_strbuf key;
	uint32_t id;
	int rc;

	fp_strbuf_init(&key, 0);
	rc = fp_strbuf_addstr(&key, kind);
	if (!rc)
		rc = fp_strbuf_addch(&key, 0x1f);
	if (!rc)
		rc = fp_strbuf_add(&key, detail, len);
	if (rc)
		goto out;
	rc = fp_intern_add(r->deg_keys, key.buf, key.len, &id);
	if (rc)
		goto out;
	if (id < r->ndegs) {
		r->degs[id].count++;
		goto out;
	}
	if (fp__grow((void **)&r->degs, &r->alloc_degs, r->ndegs + 1, sizeof(*r->degs), SIZE_MAX)) {
		rc = FP_ENOMEM;
		goto out;
	}
	r->degs[id].kind = fp_arena_strndup(&r->arena, kind, strlen(kind));
	r->degs[id].detail = fp_arena_strndup(&r->arena, detail, len);
	if (!r->degs[id].kind || !r->degs[id].detail) {
		rc = fp_arena_last_error(&r->arena);
		goto out;
	}
	r->degs[id].count = 1;
	r->degs[id].first_record = record;
	r->ndegs++;
out:
	fp_strbuf_release(&key);
	return rc;
}

size_t fp__ncu_base_name(const char *name, char *buf, size_t size)
{
	size_t n = strlen(name), b = 0, e, depth = 0;

	if (!size)
		return 0;
	if (starts(name, n, "void "))
		b = 5;
	e = n;
	/* Drop a trailing "(...)" parameter list, balanced from the end. */
	if (e > b && name[e - 1] == ')') {
		size_t i = e;

		while (i > b) {
			i--;
			if (name[i] == ')')
				depth++;
			else if (name[i] == '(' && --depth == 0)
				break;
		}
		if (depth == 0 && i > b)
			e = i;
	}
	while (e > b && name[e - 1] == ' ')
		e--;
	n = FP_MIN(e - b, size - 1);
	memcpy(buf, name + b, n);
	buf[n] = '\0';
	return n;
}

/* ---- values and units -------------------------------------------------------------------------- */

bool fp_ncu_parse_value(const char *s, size_t len, double *out)
{
	char buf[128];
	size_t i = 0, n = 0, group = 0, digits;
	bool sep = false;
	char *end;
	double v;

	while (i < len && s[i] == ' ')
		i++;
	while (len > i && s[len - 1] == ' ')
		len--;
	if (i < len && (s[i] == '-' || s[i] == '+'))
		buf[n++] = s[i++];
	digits = 0;
	while (i < len && (isdigit((unsigned char)s[i]) || s[i] == ',')) {
		if (n + 2 >= sizeof(buf))
			return false;
		if (s[i] == ',') {
			/* A separator needs 1-3 digits before the first and exactly 3 between. */
			if (group == 0 || group > 3 || (sep && group != 3))
				return false;
			sep = true;
			group = 0;
			i++;
			continue;
		}
		buf[n++] = s[i++];
		group++;
		digits++;
	}
	if (sep && group != 3)
		return false;
	if (i < len && s[i] == '.') {
		if (n + 2 >= sizeof(buf))
			return false;
		buf[n++] = '.';
		i++;
		while (i < len && isdigit((unsigned char)s[i])) {
			if (n + 2 >= sizeof(buf))
				return false;
			buf[n++] = s[i++];
			digits++;
		}
	}
	if (!digits)
		return false;
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		size_t exp_digits = 0;

		if (n + 3 >= sizeof(buf))
			return false;
		buf[n++] = 'e';
		i++;
		if (i < len && (s[i] == '-' || s[i] == '+'))
			buf[n++] = s[i++];
		while (i < len && isdigit((unsigned char)s[i])) {
			if (n + 2 >= sizeof(buf))
				return false;
			buf[n++] = s[i++];
			exp_digits++;
		}
		if (!exp_digits)
			return false;
	}
	if (i != len)
		return false;
	buf[n] = '\0';
	/* The buffer holds only ASCII digits, '.', 'e' and signs; '.' is the radix in the "C"
	 * locale, which the library never changes. Guard against a caller's locale anyway. */
	v = strtod(buf, &end);
	if (*end != '\0') {
		char *dot = strchr(buf, '.');

		if (!dot)
			return false;
		*dot = *localeconv()->decimal_point;
		v = strtod(buf, &end);
		if (*end != '\0')
			return false;
	}
	if (!isfinite(v))
		return false;
	*out = v;
	return true;
}

/* Scale of one word of a unit: an SI-prefixed word ("Kbyte"), a time ("usecond"), or as is.
 * For time words `den` picks the base: second for denominators, nanosecond otherwise. */
static void unit_word(const char *w, size_t n, bool den, double *f, const char **base, size_t *blen)
{
	static const struct {
		const char *word;
		double ns;
	} times[] = {{"psecond", 1e-3}, {"nsecond", 1}, {"usecond", 1e3}, {"msecond", 1e6},
		     {"second", 1e9},   {"ps", 1e-3},   {"ns", 1},        {"us", 1e3},
		     {"ms", 1e6},       {"s", 1e9}};
	static const char prefixes[] = "KMGTP";
	size_t i;

	*f = 1;
	*base = w;
	*blen = n;
	for (i = 0; i < FP_ARRAY_SIZE(times); i++) {
		if (eq(w, n, times[i].word)) {
			*f = den ? times[i].ns * 1e-9 : times[i].ns;
			*base = den ? "second" : "nsecond";
			*blen = strlen(*base);
			return;
		}
	}
	/* "Kbyte", "Msector", "Ghz", "Kinst": an upper-case prefix then a lower-case word. */
	if (n >= 3 && strchr(prefixes, w[0]) && w[0] && islower((unsigned char)w[1])) {
		const char *p = strchr(prefixes, w[0]);

		*f = pow(1000.0, (double)(p - prefixes + 1));
		*base = w + 1;
		*blen = n - 1;
	}
}

bool fp_ncu_unit_base(const char *unit, double *factor, char *base, size_t size)
{
	const char *slash = strchr(unit, '/'), *b1, *b2;
	size_t n = strlen(unit), l1, l2, total;
	double f1, f2 = 1;

	if (!size)
		return false;
	if (!slash) {
		unit_word(unit, n, false, &f1, &b1, &l1);
		if (l1 + 1 > size)
			return false;
		memcpy(base, b1, l1);
		base[l1] = '\0';
		*factor = f1;
		return true;
	}
	unit_word(unit, (size_t)(slash - unit), false, &f1, &b1, &l1);
	unit_word(slash + 1, n - (size_t)(slash - unit) - 1, true, &f2, &b2, &l2);
	total = l1 + 1 + l2;
	if (total + 1 > size)
		return false;
	memcpy(base, b1, l1);
	base[l1] = '/';
	memcpy(base + l1 + 1, b2, l2);
	base[total] = '\0';
	*factor = f1 / f2;
	return true;
}

enum fp_ncu_agg fp_ncu_metric_agg(const char *section, const char *name, const char *base_unit)
{
	static const char *const mean_sections[] = {"Launch Statistics", "Occupancy"};
	static const char *const mean_parts[] = {".pct",      ".ratio", ".per_", "_per_",  ".peak_",
						 ".max_rate", " per ",  "avg.",  "average"};
	size_t nl = name ? strlen(name) : 0, i;
	const char *u = base_unit ? base_unit : "";

	if (!name)
		name = "";
	/* Ratios and rates never add up over launches. */
	if (strchr(u, '/') || strchr(u, '%') || strcmp(u, "ratio") == 0 || strcmp(u, "x") == 0)
		return FP_NCU_AGG_MEAN;
	/* Launch configuration and device attributes describe one launch. */
	if (starts(name, nl, "launch__") || starts(name, nl, "device__"))
		return FP_NCU_AGG_MEAN;
	for (i = 0; section && i < FP_ARRAY_SIZE(mean_sections); i++)
		if (has_ci(section, strlen(section), mean_sections[i]))
			return FP_NCU_AGG_MEAN;
	for (i = 0; i < FP_ARRAY_SIZE(mean_parts); i++)
		if (has_ci(name, nl, mean_parts[i]))
			return FP_NCU_AGG_MEAN;
	/* A minimum or maximum over units of one launch is not a counter either. */
	if (strstr(name, ".min") || strstr(name, ".max"))
		return FP_NCU_AGG_MEAN;
	/* Without a unit only an explicit sum is a counter ("Waves Per SM" is not). */
	if (!*u)
		return nl > 4 && strcmp(name + nl - 4, ".sum") == 0 ? FP_NCU_AGG_SUM :
								      FP_NCU_AGG_MEAN;
	return FP_NCU_AGG_SUM;
}

/* Copy with the characters proton-viewer's metric syntax uses replaced. */
static size_t put_clean(char *buf, size_t size, size_t at, const char *s)
{
	for (; *s && at + 1 < size; s++) {
		char c = *s;

		if (c == '/')
			c = '-';
		else if (c == ',')
			c = ';';
		else if (c == '(')
			c = '[';
		else if (c == ')')
			c = ']';
		buf[at++] = c;
	}
	return at;
}

static size_t put_raw(char *buf, size_t size, size_t at, const char *s)
{
	for (; *s && at + 1 < size; s++)
		buf[at++] = *s;
	return at;
}

int fp_ncu_tree_metric_name(const struct fp_ncu_metric *m, char *buf, size_t size)
{
	size_t at = 0;

	if (!size || !m)
		return FP_EINVAL;
	at = put_raw(buf, size, at, "ncu:");
	/* ncu metric names are unique by themselves; labels need their section. */
	if (m->section && *m->section && !(m->name && strstr(m->name, "__"))) {
		at = put_clean(buf, size, at, m->section);
		at = put_raw(buf, size, at, ":");
	}
	at = put_clean(buf, size, at, m->name ? m->name : "");
	if (m->base_unit && *m->base_unit) {
		at = put_raw(buf, size, at, " (");
		/* Units keep their '/' ("byte/second"): proton-viewer never parses them. */
		at = put_raw(buf, size, at, m->base_unit);
		at = put_raw(buf, size, at, ")");
	}
	if (m->agg == FP_NCU_AGG_MEAN)
		at = put_raw(buf, size, at, " (pty)");
	buf[at] = '\0';
	return (int)FP_MIN(at, (size_t)INT32_MAX);
}

/* "(128, 1, 1)" or "128, 1, 1": three non-negative integers (thousands separators allowed
 * inside a component: components are separated by ", "). */
static bool parse_dim3(const char *s, size_t n, uint32_t out[3])
{
	size_t i = 0, k;

	while (i < n && s[i] == ' ')
		i++;
	if (i < n && s[i] == '(') {
		i++;
		while (n > i && s[n - 1] == ' ')
			n--;
		if (n == i || s[n - 1] != ')')
			return false;
		n--;
	}
	for (k = 0; k < 3; k++) {
		size_t b, e;
		double v;

		while (i < n && s[i] == ' ')
			i++;
		b = i;
		while (i < n && !(s[i] == ',' && (i + 1 >= n || s[i + 1] == ' ')))
			i++;
		e = i;
		if (!fp_ncu_parse_value(s + b, e - b, &v) || v < 0 || v > UINT32_MAX ||
		    v != floor(v))
			return false;
		out[k] = (uint32_t)v;
		if (k < 2) {
			if (i >= n)
				return false;
			i++; /* the ',' */
		}
	}
	while (i < n && s[i] == ' ')
		i++;
	return i == n;
}

/* ---- tool lines ------------------------------------------------------------------------------- */

static int tool_line(struct parse_ctx *c, const char *line, size_t len)
{
	struct fp_ncu_report *r = c->r;
	const char *kind = NULL;
	bool err = starts(line, len, "==ERROR==");
	bool warn = starts(line, len, "==WARNING==") || starts(line, len, "==WARN==");
	int rc;

	r->messages_seen++;
	if (r->nmessages < r->lim.max_messages) {
		char *copy = fp_arena_strndup(&r->arena, line, len);

		if (!copy)
			return fp_arena_last_error(&r->arena);
		if (fp__grow((void **)&r->messages, &r->alloc_messages, r->nmessages + 1,
			     sizeof(*r->messages), SIZE_MAX))
			return FP_ENOMEM;
		r->messages[r->nmessages++] = copy;
	}
	if (!err && !warn)
		return FP_OK;
	if (has_ci(line, len, "ERR_NVGPUCTRPERM") ||
	    has_ci(line, len, "permission to access NVIDIA GPU Performance Counters"))
		kind = "counter_permission";
	else if (has_ci(line, len, "metric") &&
		 (has_ci(line, len, "not found") || has_ci(line, len, "failed to find") ||
		  has_ci(line, len, "not supported") || has_ci(line, len, "unsupported") ||
		  has_ci(line, len, "not available") || has_ci(line, len, "invalid")))
		kind = "metric_unsupported";
	else if (has_ci(line, len, "replay"))
		kind = "replay";
	else
		kind = err ? "ncu_error" : "ncu_warning";
	rc = fp__ncu_degrade(r, kind, line, len, FP_NCU_NONE);
	return rc;
}

/* ---- rows ---------------------------------------------------------------------------------- */

static int add_record(struct parse_ctx *c, enum fp_ncu_record_kind kind, size_t *index)
{
	struct fp_ncu_report *r = c->r;
	struct fp_ncu_record *rec;
	const char **fields;
	size_t *lens, i, n = c->csv.nfields;

	if (r->nrecords >= r->lim.max_records)
		return fp_diag_set_pos(c->diag, FP_ELIMIT, c->csv.row_offset, c->csv.row_line, 1,
				       "more than %zu CSV rows", r->lim.max_records);
	if (fp__grow((void **)&r->records, &r->alloc_records, r->nrecords + 1, sizeof(*r->records),
		     SIZE_MAX))
		return FP_ENOMEM;
	fields = fp_arena_calloc(&r->arena, n, sizeof(*fields));
	lens = fp_arena_calloc(&r->arena, n, sizeof(*lens));
	if (!fields || !lens)
		return fp_arena_last_error(&r->arena);
	for (i = 0; i < n; i++) {
		size_t len;
		const char *f = fp_csv_field(&c->csv, i, &len);

		fields[i] = fp_arena_strndup(&r->arena, f, len);
		if (!fields[i])
			return fp_arena_last_error(&r->arena);
		lens[i] = len;
	}
	rec = &r->records[r->nrecords];
	rec->kind = kind;
	rec->header = c->h.record;
	rec->launch = FP_NCU_NONE;
	rec->offset = c->csv.row_offset;
	rec->line = c->csv.row_line;
	rec->nfields = n;
	rec->fields = fields;
	rec->lens = lens;
	*index = r->nrecords++;
	return FP_OK;
}

static long column(const struct fp_ncu_record *rec, const char *name)
{
	size_t i;

	for (i = 0; i < rec->nfields; i++)
		if (eq(rec->fields[i], rec->lens[i], name))
			return (long)i;
	return -1;
}

static bool is_header(const struct fp_csv_reader *csv)
{
	size_t len, i;
	const char *f = fp_csv_field(csv, 0, &len);

	if (!f || !eq(f, len, "ID"))
		return false;
	for (i = 1; i < csv->nfields; i++) {
		f = fp_csv_field(csv, i, &len);
		if (eq(f, len, "Kernel Name"))
			return true;
	}
	return false;
}

static void set_header(struct parse_ctx *c, size_t index)
{
	struct fp_ncu_report *r = c->r;
	const struct fp_ncu_record *rec = &r->records[index];
	struct hdr *h = &c->h;

	memset(h, 0, sizeof(*h));
	h->record = index;
	h->ncols = rec->nfields;
	h->units = FP_NCU_NONE;
	h->id = column(rec, "ID");
	h->pid = column(rec, "Process ID");
	h->kernel = column(rec, "Kernel Name");
	h->device = column(rec, "Device");
	h->grid = column(rec, "Grid Size");
	h->block = column(rec, "Block Size");
	h->section = column(rec, "Section Name");
	h->mname = column(rec, "Metric Name");
	h->munit = column(rec, "Metric Unit");
	h->mvalue = column(rec, "Metric Value");
	h->page = h->mname >= 0 && h->mvalue >= 0 ? FP_NCU_PAGE_DETAILS : FP_NCU_PAGE_RAW;
	if (r->page == FP_NCU_PAGE_NONE)
		r->page = h->page;
	else if (r->page != h->page)
		r->page = FP_NCU_PAGE_MIXED;
}

static const char *col(const struct fp_ncu_record *rec, long i)
{
	return i >= 0 && (size_t)i < rec->nfields ? rec->fields[i] : "";
}

static int new_launch(struct parse_ctx *c, const struct fp_ncu_record *rec, size_t index,
		      size_t *out)
{
	struct fp_ncu_report *r = c->r;
	struct fp_ncu_launch *l;
	const char *g;

	if (fp__grow((void **)&r->launches, &r->alloc_launches, r->nlaunches + 1,
		     sizeof(*r->launches), SIZE_MAX))
		return FP_ENOMEM;
	l = &r->launches[r->nlaunches];
	memset(l, 0, sizeof(*l));
	l->id = col(rec, c->h.id);
	l->process_id = col(rec, c->h.pid);
	l->kernel = col(rec, c->h.kernel);
	l->device = col(rec, c->h.device);
	g = col(rec, c->h.grid);
	l->has_grid = parse_dim3(g, strlen(g), l->grid);
	g = col(rec, c->h.block);
	l->has_block = parse_dim3(g, strlen(g), l->block);
	l->first_record = index;
	l->node = FP_CALLTREE_NONE;
	*out = r->nlaunches++;
	return FP_OK;
}

/* Display name of a metric for degradation details: "section: name" or "name". */
static int metric_label(const char *section, const char *name, struct fp_strbuf *sb)
{
	fp_strbuf_reset(sb);
	if (*section) {
		int rc = fp_strbuf_addf(sb, "%s: ", section);

		if (rc)
			return rc;
	}
	return fp_strbuf_addstr(sb, name);
}

static int add_metric(struct parse_ctx *c, size_t launch, size_t record, const char *section,
		      const char *name, const char *unit, const char *text)
{
	struct fp_ncu_report *r = c->r;
	struct fp_ncu_launch *l = &r->launches[launch];
	struct fp_ncu_metric *m;
	struct fp_strbuf label;
	char base[128];
	double factor = 1, v;
	uint32_t mid;
	uint64_t key, dummy;
	size_t tl = strlen(text);
	int rc;

	fp_strbuf_init(&label, 0);
	/* Identity: an ncu metric name ("dram__bytes.sum") is one metric whatever section lists
	 * it; a label ("Duration") is one only within its section. */
	rc = strstr(name, "__") ? fp_strbuf_addstr(&label, name) :
				  fp_strbuf_addf(&label, "%s\x1f%s", section, name);
	if (rc)
		goto out;
	/* The same metric twice for one launch (tables printed with --print-details all): the
	 * first one counts, the others stay in the records. */
	rc = fp_intern_add(c->mids, label.buf, label.len, &mid);
	if (!rc)
		rc = metric_label(section, name, &label);
	if (rc)
		goto out;
	key = ((uint64_t)launch + 1) << 32 | mid;
	if (fp_hashmap_get(&c->seen, key, &dummy)) {
		rc = fp__ncu_degrade(r, "duplicate_metric", label.buf, label.len, record);
		goto out;
	}
	rc = fp_hashmap_put(&c->seen, key, 1);
	if (rc)
		goto out;
	if (fp__grow((void **)&r->metrics, &r->alloc_metrics, r->nmetrics + 1, sizeof(*r->metrics),
		     SIZE_MAX) ||
	    fp__grow((void **)&r->metric_launch, &c->alloc_metric_launch, r->nmetrics + 1,
		     sizeof(*r->metric_launch), SIZE_MAX)) {
		rc = FP_ENOMEM;
		goto out;
	}
	m = &r->metrics[r->nmetrics];
	memset(m, 0, sizeof(*m));
	m->section = section;
	m->name = name;
	m->unit = unit;
	m->text = text;
	m->record = record;
	if (!fp_ncu_unit_base(unit, &factor, base, sizeof(base))) {
		factor = 1;
		snprintf(base, sizeof(base), "%.*s", (int)(sizeof(base) - 1), unit);
	}
	m->base_unit = fp_arena_strndup(&r->arena, base, strlen(base));
	if (!m->base_unit) {
		rc = fp_arena_last_error(&r->arena);
		goto out;
	}
	m->agg = fp_ncu_metric_agg(section, name, m->base_unit);
	if (fp_ncu_parse_value(text, tl, &v) && isfinite(v * factor)) {
		m->value = v * factor;
		m->has_value = true;
		/* The launch's duration weighs its ratios when nodes average them. */
		if (strcmp(m->base_unit, "nsecond") == 0 && l->duration_ns == 0 &&
		    (strcmp(name, "gpu__time_duration.sum") == 0 ||
		     (strcmp(name, "Duration") == 0 &&
		      has_ci(section, strlen(section), "Speed Of Light"))))
			l->duration_ns = m->value;
	} else if (tl == 0 || eq(text, tl, "n/a") || eq(text, tl, "N/A")) {
		rc = fp__ncu_degrade(r, "metric_not_available", label.buf, label.len, record);
	} else {
		rc = fp__ncu_degrade(r, "value_not_numeric", label.buf, label.len, record);
	}
	r->metric_launch[r->nmetrics] = launch;
	r->nmetrics++;
out:
	fp_strbuf_release(&label);
	return rc;
}

static int raw_row(struct parse_ctx *c, size_t index)
{
	struct fp_ncu_report *r = c->r;
	const struct fp_ncu_record *rec = &r->records[index];
	const struct fp_ncu_record *hdr = &r->records[c->h.record];
	const struct fp_ncu_record *units =
		c->h.units != FP_NCU_NONE ? &r->records[c->h.units] : NULL;
	size_t launch, i;
	int rc;

	rc = new_launch(c, rec, index, &launch);
	if (rc)
		return rc;
	r->launches[launch].nrecords = 1;
	r->records[index].launch = launch;
	/* Metric columns are ncu metric names, which always contain "__"; the identity columns
	 * (ID, Kernel Name, Grid Size...) do not. */
	for (i = 0; i < hdr->nfields; i++) {
		if (!strstr(hdr->fields[i], "__"))
			continue;
		rc = add_metric(c, launch, index, "", hdr->fields[i],
				units ? col(units, (long)i) : "", rec->fields[i]);
		if (rc)
			return rc;
	}
	return FP_OK;
}

static int details_row(struct parse_ctx *c, size_t index)
{
	struct fp_ncu_report *r = c->r;
	struct fp_ncu_record *rec = &r->records[index];
	struct fp_strbuf key;
	uint32_t kid;
	size_t launch;
	int rc;

	if (!*col(rec, c->h.mname)) { /* a rule row, or anything else without a metric */
		rec->kind = FP_NCU_RECORD_OTHER;
		return FP_OK;
	}
	fp_strbuf_init(&key, 0);
	rc = fp_strbuf_addf(&key, "%s\x1f%s\x1f%s", col(rec, c->h.pid), col(rec, c->h.id),
			    col(rec, c->h.kernel));
	if (!rc)
		rc = fp_intern_add(c->keys, key.buf, key.len, &kid);
	fp_strbuf_release(&key);
	if (rc)
		return rc;
	if (fp__grow((void **)&c->key_launch, &c->alloc_keys, kid + 1, sizeof(*c->key_launch),
		     SIZE_MAX))
		return FP_ENOMEM;
	if (kid + 1 == fp_intern_count(c->keys) && kid >= c->nkeys) {
		/* Ids are dense: a new id is the first row of a new launch. */
		rc = new_launch(c, rec, index, &launch);
		if (rc)
			return rc;
		c->key_launch[kid] = launch;
		c->nkeys = (size_t)kid + 1;
	} else {
		launch = c->key_launch[kid];
	}
	r->launches[launch].nrecords++;
	rec->launch = launch;
	return add_metric(c, launch, index, col(rec, c->h.section), col(rec, c->h.mname),
			  col(rec, c->h.munit), col(rec, c->h.mvalue));
}

static int row(struct parse_ctx *c)
{
	struct fp_ncu_report *r = c->r;
	struct fp_strbuf msg;
	size_t index;
	int rc;

	if (is_header(&c->csv)) {
		rc = add_record(c, FP_NCU_RECORD_HEADER, &index);
		if (!rc)
			set_header(c, index);
		return rc;
	}
	rc = add_record(c, FP_NCU_RECORD_DATA, &index);
	if (rc)
		return rc;
	if (c->h.record == FP_NCU_NONE) {
		static const char why[] = "row before any header row";

		r->records[index].kind = FP_NCU_RECORD_OTHER;
		return fp__ncu_degrade(r, "no_header", why, sizeof(why) - 1, index);
	}
	if (c->h.page == FP_NCU_PAGE_RAW && !c->h.saw_data && c->h.units == FP_NCU_NONE &&
	    !*col(&r->records[index], c->h.id)) {
		r->records[index].kind = FP_NCU_RECORD_UNITS;
		c->h.units = index;
		return FP_OK;
	}
	c->h.saw_data = true;
	/* The details page leaves out the trailing rule columns ("Rule Name" ... "Estimated
	 * Speedup") on metric rows (seen with ncu 2025.3): a row that is shorter than its header
	 * but reaches "Metric Value" is complete; the missing columns read as empty. */
	if (r->records[index].nfields != c->h.ncols &&
	    !(c->h.page == FP_NCU_PAGE_DETAILS && r->records[index].nfields < c->h.ncols &&
	      c->h.mvalue >= 0 && (size_t)c->h.mvalue < r->records[index].nfields)) {
		r->records[index].kind = FP_NCU_RECORD_BAD;
		fp_strbuf_init(&msg, 0);
		rc = fp_strbuf_addf(&msg, "row has %zu fields, its header %zu",
				    r->records[index].nfields, c->h.ncols);
		if (!rc)
			rc = fp__ncu_degrade(r, "row_shape", msg.buf, msg.len, index);
		fp_strbuf_release(&msg);
		return rc;
	}
	if (c->h.page == FP_NCU_PAGE_RAW)
		return raw_row(c, index);
	return details_row(c, index);
}

/* Group metrics by launch (stable counting sort) and point each launch at its run. */
static int group_metrics(struct fp_ncu_report *r)
{
	struct fp_ncu_metric *sorted;
	size_t *start, i;

	if (!r->nmetrics)
		return FP_OK;
	sorted = fp_reallocarray(NULL, r->nmetrics, sizeof(*sorted));
	start = fp_calloc(r->nlaunches + 1, sizeof(*start));
	if (!sorted || !start) {
		fp_free(sorted);
		fp_free(start);
		return FP_ENOMEM;
	}
	for (i = 0; i < r->nmetrics; i++)
		start[r->metric_launch[i] + 1]++;
	for (i = 0; i < r->nlaunches; i++)
		start[i + 1] += start[i];
	for (i = 0; i < r->nlaunches; i++) {
		r->launches[i].metrics = sorted + start[i];
		r->launches[i].nmetrics = start[i + 1] - start[i];
	}
	for (i = 0; i < r->nmetrics; i++)
		sorted[start[r->metric_launch[i]]++] = r->metrics[i];
	fp_free(start);
	fp_free(r->metrics);
	r->metrics = sorted;
	r->alloc_metrics = r->nmetrics;
	fp_free(r->metric_launch);
	r->metric_launch = NULL;
	return FP_OK;
}

static bool at_csv_row(const struct fp_csv_reader *csv)
{
	return csv->pos < csv->len && csv->text[csv->pos] == '"';
}

int fp_ncu_parse(const char *text, size_t len, const struct fp_ncu_limits *lim,
		 struct fp_ncu_report **out, struct fp_diag *diag)
{
	struct parse_ctx c;
	struct fp_ncu_report *r;
	const char *line;
	size_t llen;
	int rc, n;

	fp_diag_clear(diag);
	if (!out || (!text && len))
		return fp_diag_set(diag, FP_EINVAL, 0, "no input or no output");
	r = fp_calloc(1, sizeof(*r));
	if (!r)
		return fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
	if (lim)
		r->lim = *lim;
	if (!r->lim.max_bytes)
		r->lim.max_bytes = FP_NCU_DEFAULT_MAX_BYTES;
	if (!r->lim.max_records)
		r->lim.max_records = FP_NCU_DEFAULT_MAX_RECORDS;
	if (!r->lim.max_messages)
		r->lim.max_messages = FP_NCU_DEFAULT_MAX_MESSAGES;
	if (!r->lim.max_memory)
		r->lim.max_memory = FP_NCU_DEFAULT_MAX_MEMORY;
	fp_arena_init(&r->arena, 0, r->lim.max_memory);
	memset(&c, 0, sizeof(c));
	c.r = r;
	c.diag = diag;
	c.h.record = FP_NCU_NONE;
	c.h.units = FP_NCU_NONE;
	fp_hashmap_init(&c.seen);
	fp_csv_reader_init(&c.csv, text, len, &r->lim.csv);
	r->deg_keys = fp_intern_new();
	c.keys = fp_intern_new();
	c.mids = fp_intern_new();
	if (!r->deg_keys || !c.keys || !c.mids) {
		rc = fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
		goto fail_parse;
	}
	if (len > r->lim.max_bytes) {
		rc = fp_diag_set(diag, FP_ELIMIT, 0,
				 "input of %zu bytes is over the %zu-byte limit", len,
				 r->lim.max_bytes);
		goto fail_parse;
	}
	for (;;) {
		/* Skip the BOM the reader skips, then look at the line's first byte. */
		if (c.csv.pos < c.csv.len && !at_csv_row(&c.csv)) {
			fp_csv_skip_line(&c.csv, &line, &llen);
			if (llen == 0)
				continue;
			rc = tool_line(&c, line, llen);
			if (rc)
				goto fail_status;
			continue;
		}
		n = fp_csv_next(&c.csv, diag);
		if (n < 0) {
			rc = n;
			goto fail_parse;
		}
		if (n == 0)
			break;
		rc = row(&c);
		if (rc)
			goto fail_status;
	}
	rc = group_metrics(r);
	if (rc)
		goto fail_status;
	if (!r->nlaunches) {
		static const char why[] = "the input has no kernel launch rows";

		rc = fp__ncu_degrade(r, "no_launches", why, sizeof(why) - 1, FP_NCU_NONE);
		if (rc)
			goto fail_status;
	}
	fp_csv_reader_release(&c.csv);
	fp_intern_free(c.keys);
	fp_intern_free(c.mids);
	fp_hashmap_release(&c.seen);
	fp_free(c.key_launch);
	*out = r;
	return FP_OK;

fail_status:
	if (!diag || diag->status == 0)
		fp_diag_set_pos(diag, rc, c.csv.row_offset, c.csv.row_line, 1,
				"%s while reading row", fp_strerror(rc));
fail_parse:
	fp_csv_reader_release(&c.csv);
	fp_intern_free(c.keys);
	fp_intern_free(c.mids);
	fp_hashmap_release(&c.seen);
	fp_free(c.key_launch);
	fp_ncu_report_free(r);
	return rc;
}

int fp_ncu_read(const char *path, const struct fp_ncu_limits *lim, struct fp_ncu_report **out,
		struct fp_diag *diag)
{
	struct fp_strbuf sb;
	size_t cap = lim && lim->max_bytes ? lim->max_bytes : FP_NCU_DEFAULT_MAX_BYTES;
	int rc;

	fp_diag_clear(diag);
	if (!path || !out)
		return fp_diag_set(diag, FP_EINVAL, 0, "no path or no output");
	fp_strbuf_init(&sb, cap);
	rc = fp_strbuf_read_file(&sb, path, diag);
	if (rc == FP_ELIMIT)
		fp_diag_set(diag, rc, 0, "%s: larger than the %zu-byte limit", path, cap);
	if (!rc) {
		rc = fp_ncu_parse(sb.buf, sb.len, lim, out, diag);
		if (rc && diag) {
			char msg[sizeof(diag->msg)];

			snprintf(msg, sizeof(msg), "%s", diag->msg);
			fp_diag_set_pos(diag, rc, diag->offset, diag->line, diag->col,
					"%s:%u:%u: %s", path, (unsigned)diag->line,
					(unsigned)diag->col, msg);
		}
	}
	fp_strbuf_release(&sb);
	return rc;
}

void fp_ncu_report_free(struct fp_ncu_report *r)
{
	if (!r)
		return;
	fp_arena_release(&r->arena);
	fp_free(r->records);
	fp_free(r->launches);
	fp_free(r->metrics);
	fp_free(r->metric_launch);
	fp_free(r->degs);
	fp_intern_free(r->deg_keys);
	fp_free(r->messages);
	fp_free(r->tmetrics);
	fp_free(r->missing);
	fp_free(r);
}

/* ---- accessors ------------------------------------------------------------------------------ */

enum fp_ncu_page fp_ncu_report_page(const struct fp_ncu_report *r)
{
	return r ? r->page : FP_NCU_PAGE_NONE;
}

size_t fp_ncu_report_launch_count(const struct fp_ncu_report *r)
{
	return r ? r->nlaunches : 0;
}

const struct fp_ncu_launch *fp_ncu_report_launch(const struct fp_ncu_report *r, size_t i)
{
	return r && i < r->nlaunches ? &r->launches[i] : NULL;
}

size_t fp_ncu_report_record_count(const struct fp_ncu_report *r)
{
	return r ? r->nrecords : 0;
}

const struct fp_ncu_record *fp_ncu_report_record(const struct fp_ncu_report *r, size_t i)
{
	return r && i < r->nrecords ? &r->records[i] : NULL;
}

size_t fp_ncu_report_degradation_count(const struct fp_ncu_report *r)
{
	return r ? r->ndegs : 0;
}

const struct fp_ncu_degradation *fp_ncu_report_degradation(const struct fp_ncu_report *r, size_t i)
{
	return r && i < r->ndegs ? &r->degs[i] : NULL;
}

size_t fp_ncu_report_message_count(const struct fp_ncu_report *r)
{
	return r ? r->nmessages : 0;
}

const char *fp_ncu_report_message(const struct fp_ncu_report *r, size_t i)
{
	return r && i < r->nmessages ? r->messages[i] : NULL;
}

uint64_t fp_ncu_report_messages_seen(const struct fp_ncu_report *r)
{
	return r ? r->messages_seen : 0;
}
