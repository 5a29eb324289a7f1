/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the Nsight Compute importer's files (ncu.c: reading, ncu-attach.c: matching and
 * aggregation, ncu-vendor.c: the vendor file) share: the report's layout. Not a public header;
 * include/flagprism/ncu.h is the interface.
 */
#ifndef FP_NCU_INTERNAL_H
#define FP_NCU_INTERNAL_H

#include <flagprism/ncu.h>

#include "core/arena-internal.h"
#include "core/intern-internal.h"

/* One metric of the tree the import added, for the vendor file. */
struct fp__ncu_tree_metric {
	const char *tree_name;
	const char *section;
	const char *name;
	const char *base_unit;
	enum fp_ncu_agg agg;
	bool weighted_by_time;     /* some node's mean was weighted by launch duration */
	bool weighted_by_launches; /* some node's mean was weighted by launch count */
	uint64_t values;           /* launch values that went into it */
	uint32_t id;               /* metric id in the tree */
};

/* A node that has more launches in the profile than ncu launches were attached to it. */
struct fp__ncu_missing {
	uint32_t node;
	uint64_t count;
};

struct fp_ncu_report {
	struct fp_arena arena; /* every string and the pointer arrays of records */
	struct fp_ncu_limits lim;
	enum fp_ncu_page page;

	struct fp_ncu_record *records;
	size_t nrecords, alloc_records;
	struct fp_ncu_launch *launches;
	size_t nlaunches, alloc_launches;
	struct fp_ncu_metric *metrics; /* grouped by launch once parsing ends */
	size_t nmetrics, alloc_metrics;
	size_t *metric_launch; /* while parsing: launch of metrics[i] */

	struct fp_ncu_degradation *degs;
	size_t ndegs, alloc_degs;
	struct fp_intern *deg_keys; /* "kind\x1f detail" -> index in degs (same dense ids) */

	const char **messages;
	size_t nmessages, alloc_messages;
	uint64_t messages_seen;

	/* Filled by fp_ncu_attach(). */
	bool attached;
	struct fp_ncu_attach_stats stats;
	struct fp__ncu_tree_metric *tmetrics;
	size_t ntmetrics;
	struct fp__ncu_missing *missing;
	size_t nmissing;
};

/* Add (or count once more) a degradation; `record` is kept from the first occurrence. */
int fp__ncu_degrade(struct fp_ncu_report *r, const char *kind, const char *detail, size_t len,
		    size_t record);

/* The kernel name without a leading "void " and without its parameter list: the name ncu's
 * "function" base prints. Stores at most size-1 bytes; returns the length written. */
size_t fp__ncu_base_name(const char *name, char *buf, size_t size);

#endif /* FP_NCU_INTERNAL_H */
