/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the vendor-neutral files of src/backend/ (the backend registry, device memory) share with
 * the vendor folders beside them (host/, cuda/): the vendor table, one row per folder, and the
 * calls a vendor lends <flagprism/devmem.h>. A vendor folder defines its row
 * (fp__vendor_<name>), and its row is all the rest of the library names of it
 * (tests/abi/check-layers.py); clients reach a vendor's own API through its public header
 * (include/flagprism/cupti.h). Not a public header.
 */
#ifndef FP_BACKEND_INTERNAL_H
#define FP_BACKEND_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <flagprism/backend.h>
#include <flagprism/devmem.h>

/*
 * The vendors compiled in, X(name) each, in the order they are asked: the folder
 * src/backend/<name>/ defines the row fp__vendor_<name>. A new vendor is its folder and one row
 * here (docs/internals/backend-adaptation.md).
 */
#define FP__VENDORS(X)                                                             \
	X(host) /* the interpreter's host timer and the null backend: no device */ \
	X(cuda) /* NVIDIA: CUPTI, the CUDA driver, device memory */

/*
 * A vendor's device memory (<flagprism/devmem.h>): what the vendor-neutral functions of
 * devmem.c call, once they have checked the arguments (NULL pointers, empty sizes, the messages
 * naming them) and open() succeeded. The calls keep the public functions' contracts; the event
 * (struct fp_devmem_event) is the vendor's own type.
 */
struct fp__devmem_ops {
	/* Load the vendor's driver (once: later calls give the first answer). FP_OK, or
	 * FP_ENOTSUP with `diag` saying why. */
	int (*open)(struct fp_diag *diag);
	int (*zero)(uint64_t dptr, size_t nbytes, uint64_t stream, struct fp_diag *diag);
	int (*write)(uint64_t dptr, const void *src, size_t n, uint64_t stream,
		     struct fp_diag *diag);
	int (*read)(void *dst, uint64_t dptr, size_t n, uint64_t stream, struct fp_diag *diag);
	int (*span_add)(uint64_t base, size_t size, struct fp_diag *diag);
	void (*span_remove)(uint64_t base);
	int (*host_alloc)(uint64_t dptr, size_t n, void **out, struct fp_diag *diag);
	void (*host_free)(void *p);
	int (*read_async)(void *dst, uint64_t dptr, size_t n, uint64_t stream,
			  struct fp_devmem_event **ev, struct fp_diag *diag);
	int (*event_wait)(struct fp_devmem_event *ev, struct fp_diag *diag);
	void (*event_free)(struct fp_devmem_event *ev);
};

typedef const struct fp_backend_ops *(*fp__backend_get_fn)(void);

/* One vendor folder: what the vendor-neutral code reaches it through. */
struct fp__vendor {
	const char *name; /* its folder under src/backend/ */
	/*
	 * Profiler backends always in the registry (fp_backend_at() lists them first, in row
	 * order), NULL-terminated; NULL for none. A backend a client opts into registers itself
	 * instead (fp_cupti_register()).
	 */
	const fp__backend_get_fn *backends;
	const struct fp__devmem_ops *devmem; /* its device memory, or NULL */
};

#define FP__VENDOR_DECL(name) extern const struct fp__vendor fp__vendor_##name;
FP__VENDORS(FP__VENDOR_DECL)
#undef FP__VENDOR_DECL

/* Row `i` of the vendor table (FP__VENDORS order), or NULL past the end (backend.c). */
const struct fp__vendor *fp__vendor_at(size_t i);

/*
 * Under AddressSanitizer, LeakSanitizer would blame us for what a vendor library allocates in
 * its own constructors (libcupti's static C++ runtime keeps a pool that becomes unreachable once
 * the probe unloads the library). That memory is the vendor's, so the calls that load a vendor
 * library, and its calls that allocate, are bracketed with these.
 */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FP__ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(FP__ASAN)
#define FP__ASAN 1
#endif
#ifdef FP__ASAN
#include <sanitizer/lsan_interface.h>
#define FP__LSAN_DISABLE() __lsan_disable()
#define FP__LSAN_ENABLE() __lsan_enable()
#else
#define FP__LSAN_DISABLE() ((void)0)
#define FP__LSAN_ENABLE() ((void)0)
#endif

#endif /* FP_BACKEND_INTERNAL_H */
