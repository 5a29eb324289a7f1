# SPDX-License-Identifier: Apache-2.0
"""Diagnostic, run by hand on a GPU machine: how does CUPTI's PC-sampling API behave here?

Independent of FlagPrism's C code: it drives libcupti directly with ctypes (declared from
cupti_pcsampling.h, CUDA 13.0 layouts) in one child process per variant, so a variant's CUPTI
state cannot leak into the next. Each child enables sampling on the current (primary) context,
configures it, launches a Triton kernel with a hot loop a few times and calls
cuptiPCSamplingGetData at fixed points (right after the launches, after a context sync, after a
sleep, after Stop), then Disable, and prints what each call returned (status, totalSamples,
totalNumPcs, remainingNumPcs). Variants differ in collection mode, start/stop control, whether a
callback subscriber and which kernel activity kind are on, and where GetData is called (inside the
launch API's exit callback, like the backend's serialized drain, or outside).

    python tests/gpu/_pcs_probe.py [--out FILE] [VARIANT ...]     (no variant: DEFAULT's)

Measured on the H200 (CUDA 13.0, CUPTI 13.0.1): every serialized variant collected nothing
(GetData and Disable: no PC records, zero totals); every continuous one gave the kernel's PCs,
300 ms after the launches (not right after a context sync), with totals only from Disable.
"""

from __future__ import annotations

import ctypes as C
import json
import os
import subprocess
import sys
import time

VARIANTS = {
    # name: (mode 1=continuous 2=serialized, start/stop, subscriber, activity kind or 0,
    #        GetData inside the launch exit callback, kernel "hot" or "dot", subscriber and
    #        activity on before the kernel's module loads); most telling first
    "ser_sub_conc_cbdrain": (2, False, True, 10, True, "hot", False),
    "ser": (2, False, False, 0, False, "hot", False),
    "ser_sub_kern": (2, False, True, 3, False, "hot", False),
    "cont": (1, False, False, 0, False, "hot", False),
    "ser_ss_sub_conc": (2, True, True, 10, False, "hot", False),
    "cont_ss_sub_conc": (1, True, True, 10, False, "hot", False),
    "ser_sub_conc": (2, False, True, 10, False, "hot", False),
    "ser_sub_kern_cbdrain": (2, False, True, 3, True, "hot", False),
    "cont_sub_conc": (1, False, True, 10, False, "hot", False),
    # not run by default: the open questions of docs/internals/cupti-backend.md
    "cont_dot": (1, False, False, 0, False, "dot", False),
    "cont_late": (1, False, True, 10, False, "hot", True),
    # which part of a tl.dot kernel makes CUPTI file its samples as non-user: the pipelined
    # wgmma kernel with one stage, the same loop without wgmma (fp32 "ieee" dot: FMAs) and with
    # the pre-Hopper mma.sync (tiles too small for wgmma)
    "cont_dot_s1": (1, False, False, 0, False, "dot_s1", False),
    "cont_dot_ieee": (1, False, False, 0, False, "dot_ieee", False),
    "cont_dot_v2": (1, False, False, 0, False, "dot_v2", False),
}
DEFAULT = [v for v in VARIANTS if not v.startswith("cont_dot") and v != "cont_late"]

NPCS = 2048


class Stall(C.Structure):
    _pack_ = 1
    _fields_ = [("index", C.c_uint32), ("samples", C.c_uint32)]


class PC(C.Structure):
    _pack_ = 1
    _fields_ = [
        ("size", C.c_size_t),
        ("cubinCrc", C.c_uint64),
        ("pcOffset", C.c_uint64),
        ("functionIndex", C.c_uint32),
        ("pad", C.c_uint32),
        ("functionName", C.c_char_p),
        ("stallReasonCount", C.c_size_t),
        ("stallReason", C.POINTER(Stall)),
        ("correlationId", C.c_uint32),
        ("_tail", C.c_uint32),  # PACKED_ALIGNMENT(8): sizeof is 64
    ]


class Data(C.Structure):
    _pack_ = 1
    _fields_ = [
        ("size", C.c_size_t),
        ("collectNumPcs", C.c_size_t),
        ("totalSamples", C.c_uint64),
        ("droppedSamples", C.c_uint64),
        ("totalNumPcs", C.c_size_t),
        ("remainingNumPcs", C.c_size_t),
        ("rangeId", C.c_uint64),
        ("pPcData", C.POINTER(PC)),
        ("nonUsrKernelsTotalSamples", C.c_uint64),
        ("hardwareBufferFull", C.c_uint8),
        ("_tail", C.c_uint8 * 7),
    ]


class CfgInfo(C.Structure):
    _fields_ = [("type", C.c_int), ("status", C.c_int), ("data", C.c_uint64 * 3)]


class CfgParams(C.Structure):
    _fields_ = [
        ("size", C.c_size_t),
        ("pPriv", C.c_void_p),
        ("ctx", C.c_void_p),
        ("numAttributes", C.c_size_t),
        ("info", C.POINTER(CfgInfo)),
    ]


class CtxParams(C.Structure):
    _fields_ = [("size", C.c_size_t), ("pPriv", C.c_void_p), ("ctx", C.c_void_p)]


class GetDataParams(C.Structure):
    _fields_ = [
        ("size", C.c_size_t),
        ("pPriv", C.c_void_p),
        ("ctx", C.c_void_p),
        ("data", C.c_void_p),
    ]


class NumParams(C.Structure):
    _fields_ = [
        ("size", C.c_size_t),
        ("pPriv", C.c_void_p),
        ("ctx", C.c_void_p),
        ("n", C.POINTER(C.c_size_t)),
    ]


class ReasonParams(C.Structure):
    _fields_ = [
        ("size", C.c_size_t),
        ("pPriv", C.c_void_p),
        ("ctx", C.c_void_p),
        ("n", C.c_size_t),
        ("idx", C.POINTER(C.c_uint32)),
        ("names", C.POINTER(C.c_char_p)),
    ]


class CbData(C.Structure):
    _fields_ = [
        ("callbackSite", C.c_int),
        ("functionName", C.c_char_p),
        ("functionParams", C.c_void_p),
        ("functionReturnValue", C.c_void_p),
        ("symbolName", C.c_char_p),
        ("context", C.c_void_p),
        ("contextUid", C.c_uint32),
        ("correlationData", C.c_void_p),
        ("correlationId", C.c_uint32),
    ]


CB = C.CFUNCTYPE(None, C.c_void_p, C.c_int, C.c_uint32, C.c_void_p)
BUF_REQ = C.CFUNCTYPE(None, C.POINTER(C.c_void_p), C.POINTER(C.c_size_t), C.POINTER(C.c_size_t))
BUF_DONE = C.CFUNCTYPE(None, C.c_void_p, C.c_uint32, C.c_void_p, C.c_size_t, C.c_size_t)


def kernels():
    """(hot, dot): a kernel with a hot loop and a tl.dot matmul (PREC: tl.dot's input_precision),
    defined when a child runs (Triton is imported only there)."""
    import triton
    import triton.language as tl

    @triton.jit
    def hot(x_ptr, y_ptr, n, ITERS: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        acc = tl.load(x_ptr + offs, mask=m)
        for i in range(ITERS):
            acc = acc * 1.0001 + 0.5
            acc = tl.sqrt(acc * acc + 1.0)
        tl.store(y_ptr + offs, acc, mask=m)

    @triton.jit
    def dot(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
            PREC: tl.constexpr = "tf32"):
        pm, pn = tl.program_id(0), tl.program_id(1)
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
            b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
            acc += tl.dot(a, b, input_precision=PREC)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty))

    return hot, dot


def child(name: str) -> dict:
    mode, startstop, sub, kind, cbdrain, which, late = VARIANTS[name]
    import torch
    import triton

    hot, dot = kernels()

    n = 1 << 20
    x = torch.rand(n, device="cuda")
    y = torch.empty_like(x)
    grid = (triton.cdiv(n, 1024),)
    if which.startswith("dot"):
        dt = torch.float32 if which == "dot_ieee" else torch.float16
        ma = torch.randn(2048, 2048, device="cuda", dtype=dt)
        mb = torch.randn(2048, 2048, device="cuda", dtype=dt)
        mc = torch.empty(2048, 2048, device="cuda", dtype=dt)
        bm, bk, kw = 128, 64, {}
        if which == "dot_s1":
            kw = {"num_stages": 1}
        elif which == "dot_ieee":
            bm, bk, kw = 64, 32, {"PREC": "ieee"}
        elif which == "dot_v2":
            bm, bk = 16, 32

        def launch():
            k = dot[(2048 // bm, 2048 // bm)](ma, mb, mc, 2048, 2048, 2048, BM=bm, BN=bm, BK=bk, **kw)
            if "mma" not in out:
                ptx = k.asm.get("ptx", "")
                out["mma"] = {"wgmma": "wgmma" in ptx, "mma.sync": "mma.sync" in ptx,
                              "cp.async": "cp.async" in ptx, "shared": k.metadata.shared}
    else:

        def launch():
            hot[grid](x, y, n, ITERS=2048, BLOCK=1024)

    libdir = os.path.join(os.path.dirname(os.path.dirname(torch.__file__)), "nvidia", "cu13", "lib")
    path = os.path.join(libdir, "libcupti.so.13")
    cupti = C.CDLL(path if os.path.exists(path) else "libcupti.so")
    cuda = C.CDLL("libcuda.so.1")
    out: dict = {"variant": name, "calls": []}

    def note(call, rc, d=None):
        e = {"call": call, "rc": rc}
        if d is not None:
            e.update(
                total=d.totalSamples,
                dropped=d.droppedSamples,
                npcs=d.totalNumPcs,
                remaining=d.remainingNumPcs,
                nonuser=d.nonUsrKernelsTotalSamples,
                hwfull=d.hardwareBufferFull,
                range=d.rangeId,
            )
            if d.totalNumPcs:
                p = d.pPcData[0]
                e["pc0"] = {
                    "fn": (p.functionName or b"").decode(errors="replace")[:60],
                    "corr": p.correlationId,
                    "nstall": p.stallReasonCount,
                }
        out["calls"].append(e)

    ctx = C.c_void_p()
    cuda.cuCtxGetCurrent(C.byref(ctx))
    out["ctx"] = bool(ctx.value)

    bufs = []

    @BUF_REQ
    def buf_req(buf, size, maxrec):
        b = C.create_string_buffer(1 << 20)
        bufs.append(b)
        buf[0] = C.cast(b, C.c_void_p)
        size[0] = 1 << 20
        maxrec[0] = 0

    nrec = [0]

    @BUF_DONE
    def buf_done(ctx_, stream, buf, size, valid):
        nrec[0] += valid

    data = Data()
    pcs = (PC * NPCS)()

    def getdata(tag):
        data.totalNumPcs = data.remainingNumPcs = 0
        data.totalSamples = data.droppedSamples = data.nonUsrKernelsTotalSamples = 0
        gp = GetDataParams(C.sizeof(GetDataParams), None, ctx, C.cast(C.pointer(data), C.c_void_p))
        rc = cupti.cuptiPCSamplingGetData(C.byref(gp))
        note(tag, rc, data)
        return rc

    @CB
    def cb(ud, domain, cbid, cbdata):
        if domain != 1:
            return
        d = C.cast(cbdata, C.POINTER(CbData)).contents
        fn = d.functionName or b""
        if not fn.startswith(b"cuLaunch"):
            return
        if d.callbackSite == 1 and cbdrain:
            getdata(f"cb_exit:{fn.decode()}:corr{d.correlationId}")

    def attach():
        if sub:
            h = C.c_void_p()
            out["subscribe"] = cupti.cuptiSubscribe(C.byref(h), cb, None)
            out["enable_driver"] = cupti.cuptiEnableDomain(1, h, 1)
            out["enable_resource"] = cupti.cuptiEnableDomain(1, h, 3)
        if kind:
            out["act_reg"] = cupti.cuptiActivityRegisterCallbacks(buf_req, buf_done)
            out["act_enable"] = cupti.cuptiActivityEnable(kind)

    if late:  # CUPTI attached, not sampling, while the module loads
        attach()
    # a warm-up launch compiles and loads the module before sampling starts
    t0 = time.time()
    launch()
    torch.cuda.synchronize()
    t1 = time.time()
    launch()
    torch.cuda.synchronize()
    out["kernel_s"] = time.time() - t1
    out["compile_s"] = t1 - t0
    if not late:
        attach()

    ep = CtxParams(C.sizeof(CtxParams), None, ctx)
    note("Enable", cupti.cuptiPCSamplingEnable(C.byref(ep)))
    nr = C.c_size_t(0)
    np_ = NumParams(C.sizeof(NumParams), None, ctx, C.pointer(nr))
    note("GetNumStallReasons", cupti.cuptiPCSamplingGetNumStallReasons(C.byref(np_)))
    nreasons = nr.value
    out["nreasons"] = nreasons
    idx = (C.c_uint32 * nreasons)()
    raw = [C.create_string_buffer(128) for _ in range(nreasons)]
    names = (C.c_char_p * nreasons)(*[C.cast(b, C.c_char_p) for b in raw])
    rp = ReasonParams(C.sizeof(ReasonParams), None, ctx, nreasons, idx, names)
    note("GetStallReasons", cupti.cuptiPCSamplingGetStallReasons(C.byref(rp)))
    out["reasons_sample"] = [raw[i].value.decode() for i in range(min(4, nreasons))]
    stalls = (Stall * (NPCS * nreasons))()
    for i in range(NPCS):
        pcs[i].size = C.sizeof(PC)
        addr = C.addressof(stalls) + i * nreasons * C.sizeof(Stall)
        pcs[i].stallReason = C.cast(C.c_void_p(addr), C.POINTER(Stall))
    data.size = C.sizeof(Data)
    data.collectNumPcs = NPCS
    data.pPcData = pcs

    attrs = [(2, [nreasons, C.cast(idx, C.c_void_p).value]), (5, [mode]), (7, [1])]
    attrs.append((8, [C.cast(C.pointer(data), C.c_void_p).value]))
    if startstop:
        attrs.append((6, [1]))
    info = (CfgInfo * len(attrs))()
    for i, (t, vals) in enumerate(attrs):
        info[i].type = t
        for k, v in enumerate(vals):
            info[i].data[k] = v
    cp = CfgParams(C.sizeof(CfgParams), None, ctx, len(attrs), info)
    rc = cupti.cuptiPCSamplingSetConfigurationAttribute(C.byref(cp))
    note("SetConfig", rc)
    out["attr_status"] = {info[i].type: info[i].status for i in range(len(attrs))}
    out["sizes"] = {"Data": C.sizeof(Data), "PC": C.sizeof(PC)}

    if startstop:
        note("Start", cupti.cuptiPCSamplingStart(C.byref(ep)))
    for _ in range(3):
        launch()
    getdata("GetData_nosync")
    cuda.cuCtxSynchronize()
    getdata("GetData_sync")
    time.sleep(0.3)
    getdata("GetData_sleep")
    if startstop:
        note("Stop", cupti.cuptiPCSamplingStop(C.byref(ep)))
        getdata("GetData_stop")
        while data.remainingNumPcs:
            getdata("GetData_more")
    # a second round: launch, sync, drain (the launch-exit drain already happened in cb)
    if startstop:
        cuda.cuCtxSynchronize()
        note("Start2", cupti.cuptiPCSamplingStart(C.byref(ep)))
    launch()
    cuda.cuCtxSynchronize()
    if startstop:
        note("Stop2", cupti.cuptiPCSamplingStop(C.byref(ep)))
    getdata("GetData_round2")
    data.totalNumPcs = 0
    data.totalSamples = 0
    note("Disable", cupti.cuptiPCSamplingDisable(C.byref(ep)), data)
    if kind:
        cupti.cuptiActivityFlushAll(1)
        out["kernel_records"] = nrec[0]
    return out


TWICE = {
    # name: (first session's kernel, second session's kernel, reload the second's module before
    # its session); both kernels are compiled and loaded before CUPTI is first used
    "twice_hot_dot": ("hot", "dot", False),
    "twice_dot_hot": ("dot", "hot", False),
    "twice_hot_hot": ("hot", "hot", False),
    "twice_hot_dot_reload": ("hot", "dot", True),
}


def child_twice(name: str) -> dict:
    """Two sampling sessions (Enable ... Disable) in one process: does the second still get PC
    records for a module loaded before the first, and after reloading the module?"""
    first, second, reload = TWICE[name]
    import torch

    hot, dot = kernels()

    n = 1 << 20
    x = torch.rand(n, device="cuda")
    y = torch.empty_like(x)
    ma = torch.randn(2048, 2048, device="cuda", dtype=torch.float16)
    mb = torch.randn(2048, 2048, device="cuda", dtype=torch.float16)
    mc = torch.empty(2048, 2048, device="cuda", dtype=torch.float16)
    compiled = {}

    def launch(which):
        if which == "dot":
            compiled[which] = dot[(16, 16)](ma, mb, mc, 2048, 2048, 2048, BM=128, BN=128, BK=64)
        else:
            compiled[which] = hot[(n // 1024,)](x, y, n, ITERS=2048, BLOCK=1024)

    launch("hot")
    launch("dot")
    torch.cuda.synchronize()
    libdir = os.path.join(os.path.dirname(os.path.dirname(torch.__file__)), "nvidia", "cu13", "lib")
    path = os.path.join(libdir, "libcupti.so.13")
    cupti = C.CDLL(path if os.path.exists(path) else "libcupti.so")
    cuda = C.CDLL("libcuda.so.1")
    ctx = C.c_void_p()
    cuda.cuCtxGetCurrent(C.byref(ctx))
    out: dict = {"variant": name, "sessions": []}

    def session(which, do_reload):
        ep = CtxParams(C.sizeof(CtxParams), None, ctx)
        res = {"kernel": which, "enable": cupti.cuptiPCSamplingEnable(C.byref(ep))}
        if do_reload:  # Triton loads the module again at the next launch (the old one leaks here)
            k = compiled[which]
            k.module = k.function = k._run = None
        nr = C.c_size_t(0)
        cupti.cuptiPCSamplingGetNumStallReasons(C.byref(NumParams(C.sizeof(NumParams), None, ctx, C.pointer(nr))))
        nre = nr.value
        idx = (C.c_uint32 * nre)()
        raw = [C.create_string_buffer(128) for _ in range(nre)]
        names = (C.c_char_p * nre)(*[C.cast(b, C.c_char_p) for b in raw])
        cupti.cuptiPCSamplingGetStallReasons(C.byref(ReasonParams(C.sizeof(ReasonParams), None, ctx, nre, idx, names)))
        pcs = (PC * NPCS)()
        stalls = (Stall * (NPCS * nre))()
        for i in range(NPCS):
            pcs[i].size = C.sizeof(PC)
            pcs[i].stallReason = C.cast(C.c_void_p(C.addressof(stalls) + i * nre * C.sizeof(Stall)),
                                        C.POINTER(Stall))
        data = Data()
        data.size = C.sizeof(Data)
        data.collectNumPcs = NPCS
        data.pPcData = pcs
        attrs = [(2, [nre, C.cast(idx, C.c_void_p).value]), (5, [1]), (7, [1]),
                 (8, [C.cast(C.pointer(data), C.c_void_p).value])]
        info = (CfgInfo * len(attrs))()
        for i, (t, vals) in enumerate(attrs):
            info[i].type = t
            for k2, v in enumerate(vals):
                info[i].data[k2] = v
        res["config"] = cupti.cuptiPCSamplingSetConfigurationAttribute(
            C.byref(CfgParams(C.sizeof(CfgParams), None, ctx, len(attrs), info)))
        for _ in range(3):
            launch(which)
        cuda.cuCtxSynchronize()
        time.sleep(0.3)
        npcs = 0
        gp = GetDataParams(C.sizeof(GetDataParams), None, ctx, C.cast(C.pointer(data), C.c_void_p))
        res["getdata"] = cupti.cuptiPCSamplingGetData(C.byref(gp))
        npcs += data.totalNumPcs
        data.totalNumPcs = data.totalSamples = data.nonUsrKernelsTotalSamples = 0
        res["disable"] = cupti.cuptiPCSamplingDisable(C.byref(ep))
        res.update(npcs=npcs + data.totalNumPcs, total=data.totalSamples, nonuser=data.nonUsrKernelsTotalSamples)
        return res

    out["sessions"].append(session(first, False))
    out["sessions"].append(session(second, reload))
    return out


def run_children(script: str, child_fn, names: list[str], timeout: float) -> int:
    """The command line of a probe script: `--child NAME` runs child_fn(NAME) and prints its
    result (one JSON line after "PROBE "); otherwise `[--out FILE] NAME...` runs every NAME in
    its own child process of `script` (a process keeps its CUPTI state for life), printing each
    result as it comes and keeping them all in FILE."""
    args = sys.argv[1:]
    if args[:1] == ["--child"]:
        try:
            print("PROBE " + json.dumps(child_fn(args[1])), flush=True)
        except Exception as e:  # reported by the parent
            print("PROBE " + json.dumps({"name": args[1], "error": repr(e)}), flush=True)
        return 0
    out = None
    if args[:1] == ["--out"]:
        out, args = args[1], args[2:]
    results = []
    for v in args or names:
        t = time.time()
        try:
            r = subprocess.run([sys.executable, script, "--child", v], capture_output=True, text=True,
                               timeout=timeout)
            lines = [ln[6:] for ln in r.stdout.splitlines() if ln.startswith("PROBE ")]
            res = json.loads(lines[-1]) if lines else {"name": v, "rc": r.returncode,
                                                       "stderr": r.stderr[-2000:]}
        except subprocess.TimeoutExpired:
            res = {"name": v, "error": "timeout"}
        res["wall_s"] = round(time.time() - t, 1)
        results.append(res)
        print(json.dumps(res), flush=True)
        if out:
            with open(out, "w") as f:
                json.dump(results, f, indent=1)
    return 0


def main() -> int:
    return run_children(__file__, lambda v: (child_twice if v in TWICE else child)(v), DEFAULT, 25)


if __name__ == "__main__":
    sys.exit(main())
