/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The replayed launch's description (part `dbgdesc`): three typed objects with named fields that
 * python/flagprism/_replay.py builds once, after a launch took the Python path, and
 * python/ext/dbgfast.c reads on every replayed launch:
 *
 *   flagprism._ext.ReplayKernel  per kernel: binding, scanning, the plan table, the pipeline,
 *                                the launch JSON's constant part, where run dicts go;
 *   flagprism._ext.ReplayPlan    per specialization (a _plans.Plan's `fast`);
 *   flagprism._ext.ReplaySizing  per sizing (a _plans.Sizing's `fast`): the compiled twin, its
 *                                launcher and guards, the launch JSON's and run dict's parts.
 *
 * Each field is listed once below (name, kind, meaning): the C struct, the Python attributes and
 * the constructor's checks are all made from that list. The constructor takes every field by
 * keyword and checks its kind (a tuple is a tuple, a count an int), so the launch reads fields
 * without checking them again; no positional tuple crosses between Python and C.
 * Include <Python.h> and "ext.h" before this header.
 */
#ifndef FPY_DBGDESC_H
#define FPY_DBGDESC_H

/* Field kinds: the C type of the member and what the constructor accepts. */
#define FPY_CT_ANY PyObject *
#define FPY_CT_TUPLE PyObject *
#define FPY_CT_DICT PyObject *
#define FPY_CT_LIST PyObject *
#define FPY_CT_STR PyObject *
#define FPY_CT_BYTES PyObject *
#define FPY_CT_CALL PyObject *
#define FPY_CT_LL long long
#define FPY_CT_BOOL char

#define FPY_REPLAY_KERNEL_FIELDS(X)                                                              \
	X(names, TUPLE, "the kernel's parameter names, in signature order")                      \
	X(index, DICT, "parameter name -> position")                                             \
	X(defaults, DICT, "parameter name -> default value")                                     \
	X(knames, TUPLE, "the names the argument scan reads, in signature order")                \
	X(kbytes, BYTES, "per scanned name: 0 an argument, 1 a described constexpr, 2 Triton's") \
	X(tensor_type, ANY, "torch.Tensor")                                                      \
	X(constexpr_type, ANY, "triton.language.constexpr")                                      \
	X(device, ANY, "the record buffer's device (a plan key's first part)")                   \
	X(settings, ANY, "the Debugger settings a plan key holds")                               \
	X(generation, ANY, "_plans' generation (a plan key's last part)")                        \
	X(plans, DICT, "the twin's plan table: plan key -> _plans.Plan")                         \
	X(pipe, ANY, "the pipeline the launches are submitted to")                               \
	X(pool_base, LL, "the device address of the pipeline's pool")                            \
	X(kernel_name, STR, "the kernel's name")                                                 \
	X(source_file, STR, "the kernel's source file")                                          \
	X(site_table, STR, "the twin's site table (JSON text)")                                  \
	X(constant_part, STR, "the launch JSON's constant part")                                 \
	X(stem, STR, "the launch JSON's \"stem\" field up to the clock")                         \
	X(argv0, STR, "the script the constant part was made for")                               \
	X(cwd, BYTES, "the working directory the constant part was made for")                    \
	X(pending, DICT, "_dbgexport._pending: run index -> run dict")                           \
	X(runs, LIST, "_dbgexport._runs: the kept run dicts")                                    \
	X(max_runs, LL, "how many run dicts are kept")                                           \
	X(keep, CALL, "_dbgexport._keep(run, max_runs)")                                         \
	X(run_type, CALL, "_dbgexport.Run")                                                      \
	X(counters, DICT, "_plans.counters")                                                     \
	X(only, CALL, "_intercept.only(path, client)")                                           \
	X(stack_limit, LL, "frames of the Python stack a launch JSON names")                     \
	X(dumps, CALL, "json.dumps")                                                             \
	X(record_capacity, LL, "the Debugger's record_capacity; -1: sized from the launch")      \
	X(dump_capacity, LL, "the Debugger's dump_capacity; -1: sized from the launch")          \
	X(scan_py, CALL, "_plans.scan_py for this kernel (arguments the C scan leaves to Python)")

#define FPY_REPLAY_PLAN_FIELDS(X)                                                       \
	X(sizing_params, TUPLE, "the parameters whose values pick the sizing")          \
	X(sizings, DICT, "the plan's sizings: sizing key -> _plans.Sizing")             \
	X(args_tpl, TUPLE, "per parameter, the constant part of its launch JSON entry") \
	X(nsites, LL, "the twin's sites")                                               \
	X(has_dumps, BOOL, "whether the twin dumps")                                    \
	X(original, ANY, "the kernel's own compiled kernel (what the launch returns)")  \
	X(nparams, LL, "tensor-table entries (0: no check area)")                       \
	X(nchecks, LL, "check slots")                                                   \
	X(suppress, BOOL, "whether lanes found out of bounds are suppressed")           \
	X(records, BOOL, "whether the twin writes record slots (marker mode)")

#define FPY_REPLAY_SIZING_FIELDS(X)                                                       \
	X(records_per_program, LL, "the sites' executions per program")                   \
	X(dump_records_per_program, LL, "those of the sites that dump")                   \
	X(kernel, ANY, "the twin's compiled kernel")                                      \
	X(run, CALL, "its launcher (CompiledKernel.run)")                                 \
	X(function, ANY, "its function handle")                                           \
	X(packed_metadata, ANY, "its packed metadata")                                    \
	X(device, ANY, "the device it was launched on")                                   \
	X(get_device, CALL, "the driver's current device")                                \
	X(get_stream, CALL, "the driver's stream of a device")                            \
	X(globals, TUPLE, "(name, value, dict) of each global the twin read, as it was")  \
	X(knobs, ANY, "triton.knobs")                                                     \
	X(modes, TUPLE, "(runtime.debug, compilation.instrumentation_mode) as they were") \
	X(metadata_fn, ANY, "the kernel's launch_metadata hook, or None")                 \
	X(split0, CALL, "bound -> the launcher's arguments before the record buffer")     \
	X(split1, CALL, "bound -> those after it")                                        \
	X(json_mid_a, STR, "the launch JSON's part before the slots")                     \
	X(json_mid_b, STR, "its part between the slots and the stack")                    \
	X(json_tail, STR, "its part after the arguments")                                 \
	X(run_template, DICT, "the run dict's constant part")                             \
	X(num_warps, ANY, "the twin's warp decision (dict, or None)")                     \
	X(registers, ANY, "the twin's register decision (dict, or None)")                 \
	X(path, ANY, "the launch route the sizing was learnt on (_replay.route_token)")

#define FPY__FIELD(name, kind, doc) FPY_CT_##kind name;

struct fpy_replay_kernel {
	PyObject_HEAD FPY_REPLAY_KERNEL_FIELDS(FPY__FIELD)
};

struct fpy_replay_plan {
	PyObject_HEAD FPY_REPLAY_PLAN_FIELDS(FPY__FIELD)
};

struct fpy_replay_sizing {
	PyObject_HEAD FPY_REPLAY_SIZING_FIELDS(FPY__FIELD)
};

#undef FPY__FIELD

/* The three types (set by the part's exec; borrowed). */
extern PyTypeObject *fpy_replay_kernel_type, *fpy_replay_plan_type, *fpy_replay_sizing_type;

#endif
