/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The member names of the Debugger's JSON outputs that a reader relies on: the statement report
 * (<stem>.json), the level-2 dump index (tensor_index.json) and the run's summary (summary.json,
 * also as merged across ranks or pytest-xdist workers); the schema is
 * docs/formats/debugger-report-schema.md. The library's writers (src/debug/report-json.c,
 * report-npy.c, summary.c, summary-ranks.c) and its reader (the HTML report, src/html/) spell
 * these members only through this list, so renaming one is one edit here and a member a reader
 * asks for can no longer be dropped from a writer unnoticed: tests/unit/test-debug-keys.c writes
 * every output and finds each key of FP_DBG_KEYS() at its place. Programs that read the reports
 * may use the names too.
 *
 * FP_DBG_KEY_<OBJECT>_<NAME> is member <NAME> of the JSON object <OBJECT>; the value is the
 * member's spelling (a string literal, so it also joins other literals). Members that only a
 * writer knows (no reader in the library asks for them) are not listed: a member joins the list
 * when a reader starts to read it. This header is data only: no function, nothing to link, so any
 * folder of src/ may include it without depending on the Debugger's code.
 */
#ifndef FLAGPRISM_DEBUG_KEYS_H
#define FLAGPRISM_DEBUG_KEYS_H

/* ---- <stem>.json ------------------------------------------------------------------------------ */

/* REPORT: the report itself */
#define FP_DBG_KEY_REPORT_SCHEMA_VERSION "schema_version"
#define FP_DBG_KEY_REPORT_KERNEL "kernel"
#define FP_DBG_KEY_REPORT_CONFIG "config"
#define FP_DBG_KEY_REPORT_RUN "run"
#define FP_DBG_KEY_REPORT_COMPLETE "complete"
#define FP_DBG_KEY_REPORT_OVERFLOW_COUNT "overflow_count"
#define FP_DBG_KEY_REPORT_DUMP_OVERFLOW_WORDS "dump_overflow_words"
#define FP_DBG_KEY_REPORT_RECORD_COUNT "record_count"
#define FP_DBG_KEY_REPORT_DUMP_COUNT "dump_count"
#define FP_DBG_KEY_REPORT_ARTIFACTS "artifacts"
#define FP_DBG_KEY_REPORT_ARGS "args"
#define FP_DBG_KEY_REPORT_COVERAGE "coverage"
#define FP_DBG_KEY_REPORT_STATEMENTS "statements"
#define FP_DBG_KEY_REPORT_FINDINGS "findings"

/* KERNEL: the report's "kernel" */
#define FP_DBG_KEY_KERNEL_NAME "name"
#define FP_DBG_KEY_KERNEL_GRID "grid"
#define FP_DBG_KEY_KERNEL_BACKEND "backend"
#define FP_DBG_KEY_KERNEL_SOURCE_FILE "source_file"

/* CONFIG: the report's "config" */
#define FP_DBG_KEY_CONFIG_SANITIZE "sanitize"

/* ARTIFACTS: the report's "artifacts" (level-2 dumps) */
#define FP_DBG_KEY_ARTIFACTS_WRITTEN "written"
#define FP_DBG_KEY_ARTIFACTS_DIR "dir"

/* ARG: an element of the report's "args" (a tensor argument) */
#define FP_DBG_KEY_ARG_NAME "name"
#define FP_DBG_KEY_ARG_ELEMENT_SIZE "element_size"
#define FP_DBG_KEY_ARG_VIEW "view"
#define FP_DBG_KEY_ARG_STORAGE "storage"

/* RANGE: a byte range, the "view" or "storage" of an argument or an out-of-bounds finding */
#define FP_DBG_KEY_RANGE_START "start"
#define FP_DBG_KEY_RANGE_END "end"

/* STATEMENT: an element of the report's "statements" */
#define FP_DBG_KEY_STATEMENT_ID "id"
#define FP_DBG_KEY_STATEMENT_LINE "line"
#define FP_DBG_KEY_STATEMENT_COL "col"
#define FP_DBG_KEY_STATEMENT_END_LINE "end_line"
#define FP_DBG_KEY_STATEMENT_LOOP_DEPTH "loop_depth"
#define FP_DBG_KEY_STATEMENT_SOURCE "source"
#define FP_DBG_KEY_STATEMENT_READS "reads"
#define FP_DBG_KEY_STATEMENT_RESULTS "results"
#define FP_DBG_KEY_STATEMENT_MEMORY "memory"

/* READ: an element of a statement's "reads" */
#define FP_DBG_KEY_READ_NAME "name"
#define FP_DBG_KEY_READ_LINE "line"

/* SITE: an element of a statement's "results" (RESULT) or "memory" (ACCESS) */
#define FP_DBG_KEY_SITE_ID "site"
#define FP_DBG_KEY_SITE_ACCESS "access"
#define FP_DBG_KEY_SITE_NAME "name"
#define FP_DBG_KEY_SITE_DTYPE "dtype"
#define FP_DBG_KEY_SITE_SHAPE "shape"
#define FP_DBG_KEY_SITE_RANK "rank"
#define FP_DBG_KEY_SITE_INSTANCE_COUNT "instance_count"
#define FP_DBG_KEY_SITE_INSTANCES "instances"

/* INSTANCE: an element of a site's "instances" */
#define FP_DBG_KEY_INSTANCE_PROGRAM "program"
#define FP_DBG_KEY_INSTANCE_EXECUTION "execution"
#define FP_DBG_KEY_INSTANCE_SUMMARY "summary"
#define FP_DBG_KEY_INSTANCE_ADDRESS_SUMMARY "address_summary"

/* VALUE: an instance's "summary" (SUMMARY) */
#define FP_DBG_KEY_VALUE_ELEMENT_COUNT "element_count"
#define FP_DBG_KEY_VALUE_NAN_COUNT "nan_count"
#define FP_DBG_KEY_VALUE_INF_COUNT "inf_count"
#define FP_DBG_KEY_VALUE_ZERO_COUNT "zero_count"
#define FP_DBG_KEY_VALUE_MEAN "mean"
#define FP_DBG_KEY_VALUE_MIN "min"
#define FP_DBG_KEY_VALUE_MAX "max"

/* ADDRESS: an instance's "address_summary" (ADDRESS) */
#define FP_DBG_KEY_ADDRESS_MIN_ADDR "min_addr"
#define FP_DBG_KEY_ADDRESS_MAX_ADDR "max_addr"
#define FP_DBG_KEY_ADDRESS_ACTIVE_LANE_COUNT "active_lane_count"
#define FP_DBG_KEY_ADDRESS_LANE_COUNT "lane_count"
#define FP_DBG_KEY_ADDRESS_SPAN_BYTES "address_span_bytes"

/* FINDING: an element of the report's "findings" */
#define FP_DBG_KEY_FINDING_KIND "kind"
#define FP_DBG_KEY_FINDING_STATEMENT "statement"
#define FP_DBG_KEY_FINDING_STATEMENT_ID "statement_id"
#define FP_DBG_KEY_FINDING_LINE "line"
#define FP_DBG_KEY_FINDING_SITE "site"
#define FP_DBG_KEY_FINDING_MESSAGE "message"
#define FP_DBG_KEY_FINDING_PARAM "param"
#define FP_DBG_KEY_FINDING_VIEW "view"
#define FP_DBG_KEY_FINDING_STORAGE "storage"

/* ---- <stem>_artifacts/tensor_index.json --------------------------------------------------------- */

/* INDEX: the index itself */
#define FP_DBG_KEY_INDEX_ARTIFACTS "artifacts"

/* DUMP: an element of the index's "artifacts" (one .npy file) */
#define FP_DBG_KEY_DUMP_FILE "file"
#define FP_DBG_KEY_DUMP_SITE "site"
#define FP_DBG_KEY_DUMP_STATEMENT_LINE "statement_line"
#define FP_DBG_KEY_DUMP_NAME "name"
#define FP_DBG_KEY_DUMP_KIND "kind"
#define FP_DBG_KEY_DUMP_ACCESS "access"
#define FP_DBG_KEY_DUMP_PROGRAM "program"
#define FP_DBG_KEY_DUMP_EXECUTION "execution"
#define FP_DBG_KEY_DUMP_DTYPE "dtype"
#define FP_DBG_KEY_DUMP_SOURCE_DTYPE "source_dtype"
#define FP_DBG_KEY_DUMP_SHAPE "shape"

/* ---- summary.json ----------------------------------------------------------------------------- */

/* SUMMARY: the summary itself ("ranks" in one merged across ranks, "workers" across the parts of
 * a pytest-xdist session) */
#define FP_DBG_KEY_SUMMARY_FINDINGS "findings"
#define FP_DBG_KEY_SUMMARY_RANKS "ranks"
#define FP_DBG_KEY_SUMMARY_WORKERS "workers"
#define FP_DBG_KEY_SUMMARY_INCOMPLETE "incomplete"

/* SUMMARY_FINDING: an element of the summary's "findings" ("report": the launch's text report) */
#define FP_DBG_KEY_SUMMARY_FINDING_REPORT "report"

/* MERGE: a merged summary's "ranks" or "workers" */
#define FP_DBG_KEY_MERGE_INPUTS "inputs"

/* MERGE_INPUT: an element of "inputs" (one merged summary; "summary": its path) */
#define FP_DBG_KEY_MERGE_INPUT_SUMMARY "summary"

/*
 * Read but written by no FlagPrism writer: a summary of another writer may name its reports in
 * "reports" (paths) or "launches" (objects with a "report"); the HTML report reads those too
 * (docs/cli/flagprism-report.md). They are kept apart so that the test can say that no writer
 * writes them: one that starts to moves its keys into FP_DBG_KEYS().
 */
#define FP_DBG_KEY_SUMMARY_REPORTS "reports"
#define FP_DBG_KEY_SUMMARY_LAUNCHES "launches"
#define FP_DBG_KEY_SUMMARY_LAUNCH_REPORT "report"

/* ---- the lists ------------------------------------------------------------------------------- */

/*
 * Every key above that a writer writes, as X(OBJECT, NAME) for FP_DBG_KEY_<OBJECT>_<NAME>, in
 * the order of the definitions. X(OBJECT, NAME) naming a key not defined above does not compile;
 * a definition missing here fails tests/unit/test-debug-keys.c.
 */
#define FP_DBG_KEYS(X)                 \
	X(REPORT, SCHEMA_VERSION)      \
	X(REPORT, KERNEL)              \
	X(REPORT, CONFIG)              \
	X(REPORT, RUN)                 \
	X(REPORT, COMPLETE)            \
	X(REPORT, OVERFLOW_COUNT)      \
	X(REPORT, DUMP_OVERFLOW_WORDS) \
	X(REPORT, RECORD_COUNT)        \
	X(REPORT, DUMP_COUNT)          \
	X(REPORT, ARTIFACTS)           \
	X(REPORT, ARGS)                \
	X(REPORT, COVERAGE)            \
	X(REPORT, STATEMENTS)          \
	X(REPORT, FINDINGS)            \
	X(KERNEL, NAME)                \
	X(KERNEL, GRID)                \
	X(KERNEL, BACKEND)             \
	X(KERNEL, SOURCE_FILE)         \
	X(CONFIG, SANITIZE)            \
	X(ARTIFACTS, WRITTEN)          \
	X(ARTIFACTS, DIR)              \
	X(ARG, NAME)                   \
	X(ARG, ELEMENT_SIZE)           \
	X(ARG, VIEW)                   \
	X(ARG, STORAGE)                \
	X(RANGE, START)                \
	X(RANGE, END)                  \
	X(STATEMENT, ID)               \
	X(STATEMENT, LINE)             \
	X(STATEMENT, COL)              \
	X(STATEMENT, END_LINE)         \
	X(STATEMENT, LOOP_DEPTH)       \
	X(STATEMENT, SOURCE)           \
	X(STATEMENT, READS)            \
	X(STATEMENT, RESULTS)          \
	X(STATEMENT, MEMORY)           \
	X(READ, NAME)                  \
	X(READ, LINE)                  \
	X(SITE, ID)                    \
	X(SITE, ACCESS)                \
	X(SITE, NAME)                  \
	X(SITE, DTYPE)                 \
	X(SITE, SHAPE)                 \
	X(SITE, RANK)                  \
	X(SITE, INSTANCE_COUNT)        \
	X(SITE, INSTANCES)             \
	X(INSTANCE, PROGRAM)           \
	X(INSTANCE, EXECUTION)         \
	X(INSTANCE, SUMMARY)           \
	X(INSTANCE, ADDRESS_SUMMARY)   \
	X(VALUE, ELEMENT_COUNT)        \
	X(VALUE, NAN_COUNT)            \
	X(VALUE, INF_COUNT)            \
	X(VALUE, ZERO_COUNT)           \
	X(VALUE, MEAN)                 \
	X(VALUE, MIN)                  \
	X(VALUE, MAX)                  \
	X(ADDRESS, MIN_ADDR)           \
	X(ADDRESS, MAX_ADDR)           \
	X(ADDRESS, ACTIVE_LANE_COUNT)  \
	X(ADDRESS, LANE_COUNT)         \
	X(ADDRESS, SPAN_BYTES)         \
	X(FINDING, KIND)               \
	X(FINDING, STATEMENT)          \
	X(FINDING, STATEMENT_ID)       \
	X(FINDING, LINE)               \
	X(FINDING, SITE)               \
	X(FINDING, MESSAGE)            \
	X(FINDING, PARAM)              \
	X(FINDING, VIEW)               \
	X(FINDING, STORAGE)            \
	X(INDEX, ARTIFACTS)            \
	X(DUMP, FILE)                  \
	X(DUMP, SITE)                  \
	X(DUMP, STATEMENT_LINE)        \
	X(DUMP, NAME)                  \
	X(DUMP, KIND)                  \
	X(DUMP, ACCESS)                \
	X(DUMP, PROGRAM)               \
	X(DUMP, EXECUTION)             \
	X(DUMP, DTYPE)                 \
	X(DUMP, SOURCE_DTYPE)          \
	X(DUMP, SHAPE)                 \
	X(SUMMARY, FINDINGS)           \
	X(SUMMARY, RANKS)              \
	X(SUMMARY, WORKERS)            \
	X(SUMMARY, INCOMPLETE)         \
	X(SUMMARY_FINDING, REPORT)     \
	X(MERGE, INPUTS)               \
	X(MERGE_INPUT, SUMMARY)

/* The keys read but not written (above), as FP_DBG_KEYS() lists the written ones. */
#define FP_DBG_KEYS_UNWRITTEN(X) \
	X(SUMMARY, REPORTS)      \
	X(SUMMARY, LAUNCHES)     \
	X(SUMMARY_LAUNCH, REPORT)

#endif /* FLAGPRISM_DEBUG_KEYS_H */
