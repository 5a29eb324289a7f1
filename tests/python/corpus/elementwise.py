# SPDX-License-Identifier: Apache-2.0
"""Element-wise, gather and scatter kernels of the corpus (see corpus/__init__.py).

Each kernel is the correct one with a constexpr ``BUG`` (or, for data bugs, the same kernel with
bad data); the line a finding must name carries ``# BUG[tag]``. The expected numbers are worked
out in the comments above each case from the sizes and data it builds. Addresses (``addr``) are
relative to the start of the named parameter's view; lanes are numbered row-major over the access'
block; programs linearly (x fastest).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from . import Arena, Case, Expect, Launch, Setup, rand, randn

# ================================================================================================
# Vector add: neighbour overruns into the next tensor and into another slice of one storage
# ================================================================================================


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, BUG: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if BUG:
        mask = offs <= n  # off by one
    else:
        mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)  # BUG[add_x]
    y = tl.load(y_ptr + offs, mask=mask)  # BUG[add_y]
    tl.store(out_ptr + offs, x + y, mask=mask)  # BUG[add_out]


def _add(packed: bool):
    def make(dev: str, planted: bool) -> Setup:
        n = 100
        ar = Arena(dev)
        if packed:
            # q/k/v-style: three slices of one storage
            buf = ar.tensor((3, n))
            x, y, out = buf[0], buf[1], buf[2]
            x.copy_(randn(n, seed=1))
            y.copy_(randn(n, seed=2))
        else:
            x = ar.tensor(n, fill=randn(n, seed=1))
            y = ar.tensor(n, fill=randn(n, seed=2), adjacent=True)  # right after x
            out = ar.tensor(n)
        xr, yr = x.cpu().clone(), y.cpu().clone()

        def verify() -> None:
            # the lane past the end is suppressed: the in-bounds sum is the same either way
            torch.testing.assert_close(out.cpu(), xr + yr, rtol=0, atol=0)

        return Setup(
            [Launch(add_kernel, (2,), (x, y, out, n), {"BLOCK": 64, "BUG": int(planted)})],
            [out],
            verify,
            {"x_ptr": x, "y_ptr": y, "out_ptr": out},
            ar,
        )

    return make


# n = 100, BLOCK = 64: program 1 holds offs 64..127; `offs <= n` keeps lane 36 (offs 100), one
# element past each tensor: 4 bytes, 1 lane, at byte 400 of each view.
_ONE = dict(past=4, lanes=1, addr=400, program=(1, 0, 0), programs=1, instances=1, iteration=None)


def _add_next_expect(s: Setup) -> list[Expect]:
    return [
        # x is followed directly by y (another allocation): the read lands in y
        Expect(
            "out_of_bounds",
            "add_x",
            param="x_ptr",
            location="other_storage",
            other_param="y_ptr",
            **_ONE,
        ),
        Expect("out_of_bounds", "add_y", param="y_ptr", location="outside_allocations", **_ONE),
        Expect("out_of_bounds", "add_out", param="out_ptr", location="outside_allocations", **_ONE),
    ]


def _add_packed_expect(s: Setup) -> list[Expect]:
    return [
        # x, y, out are rows 0, 1, 2 of one tensor: x's overrun reads y, y's overrun reads out
        Expect(
            "out_of_bounds",
            "add_x",
            param="x_ptr",
            location="inside_storage",
            other_param="y_ptr",
            **_ONE,
        ),
        Expect(
            "out_of_bounds",
            "add_y",
            param="y_ptr",
            location="inside_storage",
            other_param="out_ptr",
            **_ONE,
        ),
        Expect("out_of_bounds", "add_out", param="out_ptr", location="outside_allocations", **_ONE),
    ]


# ================================================================================================
# A loop whose trip count is loaded from memory (100 trips): the last trip runs past the row
# ================================================================================================


@triton.jit
def chunked_row_sum_kernel(
    x_ptr, trips_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr, BUG: tl.constexpr
):
    row = tl.program_id(0)
    n_chunks = tl.load(trips_ptr + row)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(n_chunks):
        cols = i * BLOCK + offs
        if BUG:
            v = tl.load(x_ptr + row * stride + cols)  # BUG[trips_load]
        else:
            v = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
        acc += v
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


def _trips_make(dev: str, planted: bool) -> Setup:
    block, rows = 16, 2
    n = 100 * block - 5  # 1595: cdiv = 100 chunks, the last one 11 wide
    ar = Arena(dev)
    x = ar.tensor((rows, n), fill=randn(rows, n, seed=3))
    trips = ar.tensor(
        rows, torch.int32, fill=torch.full((rows,), triton.cdiv(n, block), dtype=torch.int32)
    )
    out = ar.tensor(rows)
    xr = x.cpu().double()

    def verify() -> None:
        ref = xr.sum(1).float()
        if (
            planted
        ):  # row 0's last chunk reads 5 elements of row 1 (inside the view): only row 1 is right
            torch.testing.assert_close(out.cpu()[1], ref[1], rtol=1e-4, atol=1e-3)
        else:
            torch.testing.assert_close(out.cpu(), ref, rtol=1e-4, atol=1e-3)

    return Setup(
        [
            Launch(
                chunked_row_sum_kernel,
                (rows,),
                (x, trips, out, n, n),
                {"BLOCK": block, "BUG": int(planted)},
            )
        ],
        [out],
        verify,
        {"x_ptr": x, "trips_ptr": trips, "out_ptr": out},
        ar,
    )


def _trips_expect(s: Setup) -> list[Expect]:
    # row 1, trip i = 99: cols 1584..1599 of a 1595-wide row, element 1595 + 1584 + 11.. = 3190..3194
    # are past the 3190-element view: 5 lanes (lanes 11..15), 20 bytes, first at byte 3190 * 4.
    return [
        Expect(
            "out_of_bounds",
            "trips_load",
            param="x_ptr",
            location="outside_allocations",
            past=20,
            lanes=5,
            addr=3190 * 4,
            program=(1, 0, 0),
            programs=1,
            instances=1,
            iteration=("i", 99),
        )
    ]


# ================================================================================================
# A loop-carried pointer (`ptrs += BLOCK`) whose mask is not advanced with it
# ================================================================================================


@triton.jit
def row_mean_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr, BUG: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    ptrs = x_ptr + row * stride + offs
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        if BUG:
            mask = offs < n_cols  # computed as if for the first block only
        else:
            mask = start + offs < n_cols
        acc += tl.load(ptrs, mask=mask, other=0.0)  # BUG[rowmean_load]
        ptrs += BLOCK
    tl.store(out_ptr + row, tl.sum(acc, axis=0) / n_cols)


def _rowmean_make(dev: str, planted: bool) -> Setup:
    m, n = 3, 100
    ar = Arena(dev)
    parent = ar.tensor((m + 1, n), fill=randn(m + 1, n, seed=4))
    x = parent[:m]  # a view of the first rows of a larger tensor
    out = ar.tensor(m)
    xr = x.cpu().double()

    def verify() -> None:
        ref = xr.mean(1).float()
        if planted:  # rows 0 and 1 read the next row's head; the last row's overrun is suppressed
            torch.testing.assert_close(out.cpu()[2], ref[2], rtol=1e-5, atol=1e-6)
        else:
            torch.testing.assert_close(out.cpu(), ref, rtol=1e-5, atol=1e-6)

    return Setup(
        [Launch(row_mean_kernel, (m,), (x, out, n, n), {"BLOCK": 32, "BUG": int(planted)})],
        [out],
        verify,
        {"x_ptr": x, "out_ptr": out},
        ar,
    )


def _rowmean_expect(s: Setup) -> list[Expect]:
    # row 2, start = 96: elements 296..327, those >= 300 (lanes 4..31) leave the 300-element view
    # into row 3 of the parent: 28 lanes, (328 - 300) * 4 = 112 bytes.
    return [
        Expect(
            "out_of_bounds",
            "rowmean_load",
            param="x_ptr",
            location="inside_storage",
            past=112,
            lanes=28,
            addr=1200,
            program=(2, 0, 0),
            programs=1,
            instances=1,
            iteration=("start", 96),
        )
    ]


# ================================================================================================
# A chunked row copy with loop-carried source and destination pointers: the store runs past
# ================================================================================================


@triton.jit
def chunked_scale_copy_kernel(
    x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr, BUG: tl.constexpr
):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    src = x_ptr + row * stride + offs
    dst = out_ptr + row * stride + offs
    for start in range(0, n_cols, BLOCK):
        if BUG:
            mask = offs < n_cols  # computed as if for the first block only
        else:
            mask = start + offs < n_cols
        v = tl.load(src, mask=mask, other=0.0)  # BUG[copy_load]
        tl.store(dst, v * 2.0, mask=mask)  # BUG[copy_store]
        src += BLOCK
        dst += BLOCK


def _copy_make(dev: str, planted: bool) -> Setup:
    m, n = 3, 100
    ar = Arena(dev)
    parent = ar.tensor((m + 1, n), fill=randn(m + 1, n, seed=24))  # x is its first 3 rows
    x = parent[:m]
    out_store = ar.tensor((m + 1, n))  # out is the first 3 rows of a zeroed workspace
    out = out_store[:m]
    xr = x.cpu().clone()

    def verify() -> None:
        torch.testing.assert_close(out.cpu(), xr * 2.0, rtol=0, atol=0)
        # the last row's overrun was not performed: the workspace after out is untouched
        assert int(torch.count_nonzero(out_store[m].cpu())) == 0, out_store[m, :32].cpu()

    return Setup(
        [
            Launch(
                chunked_scale_copy_kernel, (m,), (x, out, n, n), {"BLOCK": 32, "BUG": int(planted)}
            )
        ],
        [out_store],
        verify,
        {"x_ptr": x, "out_ptr": out},
        ar,
    )


def _copy_expect(s: Setup) -> list[Expect]:
    # as row_mean: the last row's trip start = 96 reaches elements 300..327 of 300 (lanes 4..31),
    # for the load and the store, each inside its parent's storage.
    c = dict(
        location="inside_storage",
        past=112,
        lanes=28,
        addr=1200,
        program=(2, 0, 0),
        programs=1,
        instances=1,
        iteration=("start", 96),
    )
    return [
        Expect("out_of_bounds", "copy_load", param="x_ptr", **c),
        Expect("out_of_bounds", "copy_store", param="out_ptr", **c),
    ]


# ================================================================================================
# Reflection padding: the source pointer chosen by tl.where
# ================================================================================================


@triton.jit
def reflect_pad1d_kernel(
    x_ptr, out_ptr, n, pad, stride_x, stride_o, BLOCK: tl.constexpr, BUG: tl.constexpr
):
    row = tl.program_id(0)
    j = tl.arange(0, BLOCK)
    i = j - pad
    x_row = x_ptr + row * stride_x
    if BUG:
        right = x_row + 2 * n - i  # reflects about n instead of n - 1
    else:
        right = x_row + 2 * (n - 1) - i
    src = tl.where(i < 0, x_row - i, tl.where(i >= n, right, x_row + i))
    valid = j < n + 2 * pad
    v = tl.load(src, mask=valid)  # BUG[reflect_load]
    tl.store(out_ptr + row * stride_o + j, v, mask=valid)


def _reflect_make(dev: str, planted: bool) -> Setup:
    rows, n, pad = 4, 50, 3
    ar = Arena(dev)
    x = ar.tensor((rows, n), fill=randn(rows, n, seed=5))
    out = ar.tensor((rows, n + 2 * pad), adjacent=True)
    xr = x.cpu().clone()

    def verify() -> None:
        ref = torch.nn.functional.pad(xr[:, None, :], (pad, pad), mode="reflect")[:, 0, :]
        if planted:  # lanes 53.. take the wrong element; everything before is right
            torch.testing.assert_close(out.cpu()[:, : n + pad], ref[:, : n + pad], rtol=0, atol=0)
        else:
            torch.testing.assert_close(out.cpu(), ref, rtol=0, atol=0)

    return Setup(
        [
            Launch(
                reflect_pad1d_kernel,
                (rows,),
                (x, out, n, pad, n, n + 2 * pad),
                {"BLOCK": 64, "BUG": int(planted)},
            )
        ],
        [out],
        verify,
        {"x_ptr": x, "out_ptr": out},
        ar,
    )


def _reflect_expect(s: Setup) -> list[Expect]:
    # lane j = 53 (i = n = 50) reads x_row[2n - i] = x_row[50]: the next row's first element for rows
    # 0..2 (inside the view), one past the end for row 3 (element 200): out starts right there.
    return [
        Expect(
            "out_of_bounds",
            "reflect_load",
            param="x_ptr",
            location="other_storage",
            other_param="out_ptr",
            past=4,
            lanes=1,
            addr=800,
            program=(3, 0, 0),
            programs=1,
            instances=1,
            iteration=None,
        )
    ]


# ================================================================================================
# Helpers two deep, on a 2-D grid: the tile loader lacks the column mask
# ================================================================================================


@triton.jit
def _load_tile(ptr, rows, cols, stride, M, N, BUG: tl.constexpr):
    offs = rows[:, None] * stride + cols[None, :]
    if BUG:
        t = tl.load(ptr + offs, mask=rows[:, None] < M, other=0.0)  # BUG[depth2_load]
    else:
        t = tl.load(ptr + offs, mask=(rows[:, None] < M) & (cols[None, :] < N), other=0.0)
    return t


@triton.jit
def _scaled_tile(x_ptr, s_ptr, rows, cols, stride, M, N, BUG: tl.constexpr):
    t = _load_tile(x_ptr, rows, cols, stride, M, N, BUG)
    s = tl.load(s_ptr + rows, mask=rows < M, other=0.0)
    return t * s[:, None]


@triton.jit
def row_scale_kernel(
    x_ptr,
    s_ptr,
    out_ptr,
    M,
    N,
    stride_x,
    stride_o,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BUG: tl.constexpr,
):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    y = _scaled_tile(x_ptr, s_ptr, rows, cols, stride_x, M, N, BUG)
    tl.store(
        out_ptr + rows[:, None] * stride_o + cols[None, :],
        y,
        mask=(rows[:, None] < M) & (cols[None, :] < N),
    )


def _depth2_make(dev: str, planted: bool) -> Setup:
    m, n = 10, 24
    ar = Arena(dev)
    x = ar.tensor((m, n), fill=randn(m, n, seed=6))
    s = ar.tensor(m, fill=randn(m, seed=7), adjacent=True)
    out = ar.tensor((m, n))
    xr, sr = x.cpu().clone(), s.cpu().clone()

    def verify() -> None:  # the columns read past a row are never stored: same result either way
        torch.testing.assert_close(out.cpu(), xr * sr[:, None], rtol=0, atol=0)

    return Setup(
        [
            Launch(
                row_scale_kernel,
                (3, 1),
                (x, s, out, m, n, n, n),
                {"BM": 4, "BN": 32, "BUG": int(planted)},
            )
        ],
        [out],
        verify,
        {"x_ptr": x, "s_ptr": s, "out_ptr": out},
        ar,
    )


def _depth2_expect(s: Setup) -> list[Expect]:
    # program (2, 0) holds rows 8..11 (10, 11 masked); columns 24..31 of row 8 are row 9's (inside),
    # of row 9 lie past the 240-element view: 8 lanes, the first lane 1 * 32 + 24 at element 240,
    # the last at 247: 32 bytes. s follows x directly.
    return [
        Expect(
            "out_of_bounds",
            "depth2_load",
            function="_load_tile",
            chain=("_scaled_tile", "_load_tile"),
            param="x_ptr",
            location="other_storage",
            other_param="s_ptr",
            past=32,
            lanes=8,
            addr=960,
            program=(2, 0, 0),
            programs=1,
            instances=1,
            iteration=None,
        )
    ]


# ================================================================================================
# A 2-D grid: a tiled transpose that masks its store with the bounds of its input
# ================================================================================================


@triton.jit
def transpose_kernel(
    x_ptr,
    out_ptr,
    M,
    N,
    stride_xm,
    stride_om,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BUG: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    t = tl.load(
        x_ptr + rm[:, None] * stride_xm + rn[None, :], mask=(rm[:, None] < M) & (rn[None, :] < N)
    )
    if BUG:
        omask = (rn[:, None] < M) & (rm[None, :] < N)  # x's bounds, not out's
    else:
        omask = (rn[:, None] < N) & (rm[None, :] < M)
    tl.store(
        out_ptr + rn[:, None] * stride_om + rm[None, :], tl.trans(t), mask=omask
    )  # BUG[transpose_store]


def _transpose_make(dev: str, planted: bool) -> Setup:
    m, n = 40, 28
    ar = Arena(dev)
    x = ar.tensor((m, n), fill=randn(m, n, seed=8))
    out = ar.tensor((n, m))
    xr = x.cpu().clone()

    def verify() -> None:
        if planted:  # out[:, :28] is written (and right), out[:, 28:] is not written at all
            torch.testing.assert_close(out.cpu()[:, :n], xr.t()[:, :n], rtol=0, atol=0)
        else:
            torch.testing.assert_close(out.cpu(), xr.t(), rtol=0, atol=0)

    return Setup(
        [
            Launch(
                transpose_kernel,
                (3, 2),
                (x, out, m, n, n, m),
                {"BM": 16, "BN": 16, "BUG": int(planted)},
            )
        ],
        [out],
        verify,
        {"x_ptr": x, "out_ptr": out},
        ar,
    )


def _transpose_expect(s: Setup) -> list[Expect]:
    # out is 28 x 40. Store lane (i, j) writes out[rn = 16 pid_n + i, rm = 16 pid_m + j], active when
    # rn < 40 and rm < 28. Rows rn >= 28 lie past the 1120-element view: programs (0, 1): rn 28..31
    # x rm 0..15 = 64 lanes; (1, 1): rn 28..31 x rm 16..27 = 48 lanes; (2, 1): no rm < 28. Highest
    # element 31 * 40 + 27 = 1267: (1268 - 1120) * 4 = 592 bytes. First: program (0, 1) (linear 3),
    # lane 12 * 16 + 0, element 1120.
    return [
        Expect(
            "out_of_bounds",
            "transpose_store",
            param="out_ptr",
            location="outside_allocations",
            past=592,
            lanes=112,
            addr=1120 * 4,
            program=(0, 1, 0),
            programs=2,
            instances=2,
            iteration=None,
        )
    ]


# ================================================================================================
# A persistent kernel (a grid-stride loop over tiles) that assumes M is a multiple of BM
# ================================================================================================


@triton.jit
def persistent_row_scale_kernel(
    x_ptr,
    s_ptr,
    out_ptr,
    M,
    N,
    stride,
    NUM_PROGS: tl.constexpr,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BUG: tl.constexpr,
):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BN)
    num_tiles = tl.cdiv(M, BM) * num_pid_n
    for tile in range(pid, num_tiles, NUM_PROGS):
        pm = tile // num_pid_n
        pn = tile % num_pid_n
        rows = pm * BM + tl.arange(0, BM)
        cols = pn * BN + tl.arange(0, BN)
        if BUG:
            mask = cols[None, :] < N
            s = tl.load(s_ptr + rows)  # BUG[persist_s]
        else:
            mask = (rows[:, None] < M) & (cols[None, :] < N)
            s = tl.load(s_ptr + rows, mask=rows < M, other=0.0)
        offs = rows[:, None] * stride + cols[None, :]
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)  # BUG[persist_x]
        tl.store(out_ptr + offs, x * s[:, None], mask=mask)  # BUG[persist_out]


def _persist_make(dev: str, planted: bool) -> Setup:
    m, n = 20, 20
    ar = Arena(dev)
    x = ar.tensor((m, n), fill=randn(m, n, seed=9))
    s = ar.tensor(m, fill=randn(m, seed=10), adjacent=True)
    out = ar.tensor((m, n), adjacent=True)
    xr, sr = x.cpu().clone(), s.cpu().clone()

    def verify() -> None:
        torch.testing.assert_close(out.cpu(), xr * sr[:, None], rtol=0, atol=0)

    return Setup(
        [
            Launch(
                persistent_row_scale_kernel,
                (4,),
                (x, s, out, m, n, n),
                {"NUM_PROGS": 4, "BM": 8, "BN": 16, "BUG": int(planted)},
            )
        ],
        [out],
        verify,
        {"x_ptr": x, "s_ptr": s, "out_ptr": out},
        ar,
    )


def _persist_expect(s: Setup) -> list[Expect]:
    # 3 x 2 = 6 tiles over 4 programs: program 0 takes tiles 0 and 4, program 1 tiles 1 and 5. Tiles 4
    # and 5 hold rows 16..23, rows 20..23 past M: tile 4 (cols 0..15) 4 x 16 = 64 lanes, tile 5 (cols
    # 16..19 of 16..31) 4 x 4 = 16 lanes: 80 lanes; highest element 23 * 20 + 19 = 479 of 400: 320
    # bytes; first lane 4 * 16 (row 20, col 0), element 400. s: rows 20..23 in both tiles, 8 lanes,
    # 16 bytes, first lane 4 at element 20. x, s and out touch: x -> s -> out -> nothing.
    common = dict(program=(0, 0, 0), programs=2, instances=2, iteration=("tile", 4))
    return [
        Expect(
            "out_of_bounds",
            "persist_s",
            param="s_ptr",
            location="other_storage",
            other_param="out_ptr",
            past=16,
            lanes=8,
            addr=80,
            **common,
        ),
        Expect(
            "out_of_bounds",
            "persist_x",
            param="x_ptr",
            location="other_storage",
            other_param="s_ptr",
            past=320,
            lanes=80,
            addr=1600,
            **common,
        ),
        Expect(
            "out_of_bounds",
            "persist_out",
            param="out_ptr",
            location="outside_allocations",
            past=320,
            lanes=80,
            addr=1600,
            **common,
        ),
    ]


# ================================================================================================
# Histogram with atomics: the upper edge, and values below the range
# ================================================================================================


@triton.jit
def histogram_kernel(
    x_ptr, hist_ptr, n, lo, hi, NBINS: tl.constexpr, BLOCK: tl.constexpr, BUG: tl.constexpr
):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    b = (x - lo) * (NBINS / (hi - lo))
    if BUG == 1:
        idx = b.to(tl.int32)  # x == hi falls into bin NBINS
        ok = mask & (x >= lo) & (x <= hi)
    elif BUG == 2:
        idx = tl.minimum(tl.floor(b).to(tl.int32), NBINS - 1)
        ok = mask  # values below lo are kept
    else:
        idx = tl.minimum(tl.floor(b).to(tl.int32), NBINS - 1)
        ok = mask & (x >= lo) & (x <= hi)
    tl.atomic_add(hist_ptr + idx, 1, mask=ok)  # BUG[hist_add]


def _hist_data() -> torch.Tensor:
    x = rand(200, seed=11)  # [0, 1)
    x[17] = x[130] = x[150] = 1.0  # == hi
    x[40] = -0.01  # bin floor(-0.16) = -1
    x[199] = -0.3  # bin floor(-4.8) = -5
    return x


def _hist(bug: int):
    def make(dev: str, planted: bool) -> Setup:
        nb = 16
        ar = Arena(dev)
        x = ar.tensor(200, fill=_hist_data())
        hists = ar.tensor((2, nb), torch.int32)  # two channels' histograms in one tensor
        hist = hists[1]
        xr = x.cpu().clone()

        def verify() -> None:
            if planted and bug == 1:  # the values == hi are dropped (suppressed), the rest counted
                inr = xr[(xr >= 0) & (xr < 1)]
                ref = torch.bincount((inr * nb).floor().long(), minlength=nb)
            else:
                ref = torch.histc(xr, bins=nb, min=0.0, max=1.0).long()
            assert torch.equal(hist.cpu().long(), ref), (hist.cpu(), ref)
            assert int(hists[0].abs().sum()) == 0

        return Setup(
            [
                Launch(
                    histogram_kernel,
                    (4,),
                    (x, hist, 200, 0.0, 1.0),
                    {"NBINS": nb, "BLOCK": 64, "BUG": bug if planted else 0},
                )
            ],
            [hists],
            verify,
            {"x_ptr": x, "hist_ptr": hist},
            ar,
        )

    return make


def _hist_upper_expect(s: Setup) -> list[Expect]:
    # x == 1.0 at 17 (program 0, lane 17), 130 and 150 (program 2): bin 16, one past hists[1], which
    # ends its storage: 3 lanes, 4 bytes.
    return [
        Expect(
            "out_of_bounds",
            "hist_add",
            param="hist_ptr",
            location="outside_allocations",
            past=4,
            lanes=3,
            addr=64,
            program=(0, 0, 0),
            programs=2,
            instances=2,
            iteration=None,
        )
    ]


def _hist_below_expect(s: Setup) -> list[Expect]:
    # x[40] = -0.01 -> bin -1 (program 0, lane 40), x[199] = -0.3 -> bin -5 (program 3): 20 bytes
    # before hists[1], inside hists[0] (no parameter of the launch).
    return [
        Expect(
            "out_of_bounds",
            "hist_add",
            param="hist_ptr",
            location="inside_storage",
            before=20,
            lanes=2,
            addr=-4,
            program=(0, 0, 0),
            programs=2,
            instances=2,
            iteration=None,
        )
    ]


# ================================================================================================
# Embedding: an out-of-vocabulary id (data), and the backward that forgets padding_idx (atomics)
# ================================================================================================


@triton.jit
def embedding_kernel(ids_ptr, weight_ptr, out_ptr, D, BLOCK_D: tl.constexpr):
    t = tl.program_id(0)
    idx = tl.load(ids_ptr + t)
    cols = tl.arange(0, BLOCK_D)
    m = cols < D
    row = tl.load(weight_ptr + idx * D + cols, mask=m)  # BUG[emb_row]
    tl.store(out_ptr + t * D + cols, row, mask=m)


def _emb_make(dev: str, planted: bool) -> Setup:
    v, d, t = 8, 16, 12
    ids = torch.randint(0, v, (t,), generator=torch.Generator().manual_seed(12), dtype=torch.int64)
    if planted:
        ids[5] = v  # an id of a larger tokenizer
        ids[9] = -1  # an unmapped id
    ar = Arena(dev)
    ids_t = ar.tensor(t, torch.int64, fill=ids)
    w = ar.tensor((v, d), fill=randn(v, d, seed=13), adjacent=True)
    out = ar.tensor((t, d), adjacent=True)
    wr = w.cpu().clone()

    def verify() -> None:
        good = (ids >= 0) & (ids < v)
        torch.testing.assert_close(out.cpu()[good], wr[ids[good]], rtol=0, atol=0)

    return Setup(
        [Launch(embedding_kernel, (t,), (ids_t, w, out, d), {"BLOCK_D": 16})],
        [out],
        verify,
        {"ids_ptr": ids_t, "weight_ptr": w, "out_ptr": out},
        ar,
    )


def _emb_expect(s: Setup) -> list[Expect]:
    # token 5 reads row 8 of 8 (elements 128..143, 64 bytes past the end, where out begins), token 9
    # row -1 (64 bytes before the start): 32 lanes over programs 5 and 9.
    return [
        Expect(
            "out_of_bounds",
            "emb_row",
            param="weight_ptr",
            location="other_storage",
            other_param="out_ptr",
            past=64,
            before=64,
            lanes=32,
            addr=512,
            program=(5, 0, 0),
            programs=2,
            instances=2,
            iteration=None,
        )
    ]


@triton.jit
def embedding_bwd_kernel(
    ids_ptr, grad_ptr, dweight_ptr, D, padding_idx, BLOCK_D: tl.constexpr, BUG: tl.constexpr
):
    t = tl.program_id(0)
    idx = tl.load(ids_ptr + t)
    cols = tl.arange(0, BLOCK_D)
    m = cols < D
    if not BUG:
        m = m & (idx != padding_idx)
    g = tl.load(grad_ptr + t * D + cols, mask=m, other=0.0)
    tl.atomic_add(dweight_ptr + idx * D + cols, g, mask=m)  # BUG[embbwd_add]


def _embbwd_make(dev: str, planted: bool) -> Setup:
    v, d, t = 8, 16, 12
    ids = torch.randint(0, v, (t,), generator=torch.Generator().manual_seed(14), dtype=torch.int64)
    ids[3] = ids[10] = -1  # padding
    ar = Arena(dev)
    ids_t = ar.tensor(t, torch.int64, fill=ids)
    grad = ar.tensor((t, d), fill=randn(t, d, seed=15))
    dw = ar.tensor((v, d), adjacent=True)
    gr = grad.cpu().clone()

    def verify() -> None:
        ref = torch.zeros(v, d)
        keep = ids >= 0
        ref.index_add_(0, ids[keep], gr[keep])
        torch.testing.assert_close(dw.cpu(), ref, rtol=1e-6, atol=1e-6)

    return Setup(
        [
            Launch(
                embedding_bwd_kernel,
                (t,),
                (ids_t, grad, dw, d, -1),
                {"BLOCK_D": 16, "BUG": int(planted)},
            )
        ],
        [dw],
        verify,
        {"ids_ptr": ids_t, "grad_ptr": grad, "dweight_ptr": dw},
        ar,
    )


def _embbwd_expect(s: Setup) -> list[Expect]:
    # tokens 3 and 10 are padding (-1): row -1 is the 64 bytes before dweight, the end of grad.
    return [
        Expect(
            "out_of_bounds",
            "embbwd_add",
            param="dweight_ptr",
            location="other_storage",
            other_param="grad_ptr",
            before=64,
            lanes=32,
            addr=-64,
            program=(3, 0, 0),
            programs=2,
            instances=2,
            iteration=None,
        )
    ]


# ================================================================================================
# Dropout: one seed in memory, read per row
# ================================================================================================


@triton.jit
def dropout_kernel(
    x_ptr, seed_ptr, out_ptr, n_cols, stride, p, BLOCK: tl.constexpr, BUG: tl.constexpr
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    if BUG:
        seed = tl.load(seed_ptr + row)  # BUG[dropout_seed]
    else:
        seed = tl.load(seed_ptr)
    r = tl.rand(seed, row * n_cols + cols)
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    keep = r > p
    y = tl.where(keep, x / (1 - p), 0.0)
    tl.store(out_ptr + row * stride + cols, y, mask=mask)


def _dropout_make(dev: str, planted: bool) -> Setup:
    m, n, p = 6, 50, 0.5
    ar = Arena(dev)
    x = ar.tensor((m, n), fill=randn(m, n, seed=16))
    seed = ar.tensor(1, torch.int64, fill=torch.tensor([1234]))
    out = ar.tensor((m, n))
    xr = x.cpu().clone()

    def verify() -> None:
        o = out.cpu()
        scaled = xr / (1 - p)
        assert bool(((o == 0) | torch.isclose(o, scaled, rtol=1e-6, atol=0)).all())
        kept = float((o != 0).float().mean())
        assert 0.3 < kept < 0.7, kept

    return Setup(
        [Launch(dropout_kernel, (m,), (x, seed, out, n, n, p), {"BLOCK": 64, "BUG": int(planted)})],
        [out],
        None if planted else verify,
        {"x_ptr": x, "seed_ptr": seed, "out_ptr": out},
        ar,
    )


def _dropout_expect(s: Setup) -> list[Expect]:
    # rows 1..5 read seeds[row] of a 1-element int64 tensor: 5 lanes, (6 - 1) * 8 = 40 bytes.
    return [
        Expect(
            "out_of_bounds",
            "dropout_seed",
            param="seed_ptr",
            location="outside_allocations",
            past=40,
            lanes=5,
            addr=8,
            program=(1, 0, 0),
            programs=5,
            instances=5,
            iteration=None,
        )
    ]


# ================================================================================================
# RoPE (Liger-style, in place): the head mask uses the padded head count
# ================================================================================================


@triton.jit
def rope_kernel(
    q_ptr,
    cos_ptr,
    sin_ptr,
    pos_ptr,
    q_stride_t,
    cos_stride,
    n_heads,
    HALF: tl.constexpr,
    BLOCK_H: tl.constexpr,
    BUG: tl.constexpr,
):
    t = tl.program_id(0)
    pos = tl.load(pos_ptr + t)
    d = tl.arange(0, HALF)
    h = tl.arange(0, BLOCK_H)
    cos = tl.load(cos_ptr + pos * cos_stride + d)
    sin = tl.load(sin_ptr + pos * cos_stride + d)
    if BUG:
        hmask = h[:, None] < BLOCK_H  # the padded head count
    else:
        hmask = h[:, None] < n_heads
    first = q_ptr + t * q_stride_t + h[:, None] * (2 * HALF) + d[None, :]
    x1 = tl.load(first, mask=hmask, other=0.0)  # BUG[rope_x1]
    x2 = tl.load(first + HALF, mask=hmask, other=0.0)  # BUG[rope_x2]
    tl.store(first, x1 * cos[None, :] - x2 * sin[None, :], mask=hmask)  # BUG[rope_o1]
    tl.store(first + HALF, x2 * cos[None, :] + x1 * sin[None, :], mask=hmask)  # BUG[rope_o2]


def _rope_make(dev: str, planted: bool) -> Setup:
    t, h, half, max_pos = 5, 6, 8, 8
    ar = Arena(dev)
    q = ar.tensor((t, h, 2 * half), fill=randn(t, h, 2 * half, seed=17))
    ang = torch.arange(max_pos)[:, None] * (10000.0 ** (-torch.arange(half) / half))[None, :]
    cos = ar.tensor((max_pos, half), fill=torch.cos(ang), adjacent=True)
    sin = ar.tensor((max_pos, half), fill=torch.sin(ang))
    pos = ar.tensor(t, torch.int32, fill=torch.arange(t, dtype=torch.int32))
    qr, cr, sr = q.cpu().clone(), cos.cpu().clone(), sin.cpu().clone()

    def verify() -> None:
        c, s = cr[:t, None, :], sr[:t, None, :]
        x1, x2 = qr[..., :half], qr[..., half:]
        ref = torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1)
        torch.testing.assert_close(q.cpu(), ref, rtol=1e-5, atol=1e-5)

    return Setup(
        [
            Launch(
                rope_kernel,
                (t,),
                (q, cos, sin, pos, h * 2 * half, half, h),
                {"HALF": half, "BLOCK_H": 8, "BUG": int(planted)},
            )
        ],
        [q],
        None if planted else verify,
        {"q_ptr": q, "cos_ptr": cos, "sin_ptr": sin, "pos_ptr": pos},
        ar,
    )


def _rope_expect(s: Setup) -> list[Expect]:
    # heads 6 and 7 of token t are token t + 1's heads 0 and 1 (inside q) for t < 4; for token 4 they
    # start at element 480, the end of q, where cos begins. x1: 2 x 8 lanes at 480..487 and 496..503
    # (96 bytes); x2 the same + 8: 488..495, 504..511 (128 bytes). The first lane is 6 * 8.
    c = dict(
        param="q_ptr",
        location="other_storage",
        other_param="cos_ptr",
        lanes=16,
        program=(4, 0, 0),
        programs=1,
        instances=1,
        iteration=None,
    )
    return [
        Expect("out_of_bounds", "rope_x1", past=96, addr=1920, **c),
        Expect("out_of_bounds", "rope_x2", past=128, addr=1952, **c),
        Expect("out_of_bounds", "rope_o1", past=96, addr=1920, **c),
        Expect("out_of_bounds", "rope_o2", past=128, addr=1952, **c),
    ]


# ================================================================================================
# vLLM's reshape_and_cache: padding tokens (slot -1) must be skipped
# ================================================================================================


@triton.jit
def reshape_and_cache_kernel(
    key_ptr,
    value_ptr,
    key_cache_ptr,
    value_cache_ptr,
    slot_mapping_ptr,
    HD: tl.constexpr,
    BUG: tl.constexpr,
):
    t = tl.program_id(0)
    slot = tl.load(slot_mapping_ptr + t)
    if not BUG:
        if slot < 0:
            return  # a padding token
    offs = tl.arange(0, HD)
    k = tl.load(key_ptr + t * HD + offs)
    v = tl.load(value_ptr + t * HD + offs)
    tl.store(key_cache_ptr + slot * HD + offs, k)  # BUG[cache_k]
    tl.store(value_cache_ptr + slot * HD + offs, v)  # BUG[cache_v]


def _cache_make(dev: str, planted: bool) -> Setup:
    t, slots, hd = 6, 8, 32
    slot_map = torch.tensor([3, 0, -1, 5, -1, 2], dtype=torch.int64)
    ar = Arena(dev)
    key = ar.tensor((t, hd), fill=randn(t, hd, seed=18))
    value = ar.tensor((t, hd), fill=randn(t, hd, seed=19))
    kv = ar.tensor((2, slots, hd))  # one cache tensor: [0] keys, [1] values
    sm = ar.tensor(t, torch.int64, fill=slot_map)
    kr, vr = key.cpu().clone(), value.cpu().clone()

    def verify() -> None:
        ref = torch.zeros(2, slots, hd)
        for i, s in enumerate(slot_map.tolist()):
            if s >= 0:
                ref[0, s], ref[1, s] = kr[i], vr[i]
        torch.testing.assert_close(kv.cpu(), ref, rtol=0, atol=0)

    return Setup(
        [
            Launch(
                reshape_and_cache_kernel,
                (t,),
                (key, value, kv[0], kv[1], sm),
                {"HD": hd, "BUG": int(planted)},
            )
        ],
        [kv],
        verify,
        {
            "key_ptr": key,
            "value_ptr": value,
            "key_cache_ptr": kv[0],
            "value_cache_ptr": kv[1],
            "slot_mapping_ptr": sm,
        },
        ar,
    )


def _cache_expect(s: Setup) -> list[Expect]:
    # tokens 2 and 4 have slot -1: the 32 elements (128 bytes) before each cache. Before the key
    # cache there is nothing of the launch; before the value cache is the key cache's last slot.
    c = dict(
        before=128, lanes=64, addr=-128, program=(2, 0, 0), programs=2, instances=2, iteration=None
    )
    return [
        Expect(
            "out_of_bounds", "cache_k", param="key_cache_ptr", location="outside_allocations", **c
        ),
        Expect(
            "out_of_bounds",
            "cache_v",
            param="value_cache_ptr",
            location="inside_storage",
            other_param="key_cache_ptr",
            **c,
        ),
    ]


# ================================================================================================
# Causal conv1d (Mamba-style): the left padding is read from before the row
# ================================================================================================


@triton.jit
def causal_conv1d_kernel(
    x_ptr,
    w_ptr,
    out_ptr,
    L,
    stride_c,
    WIDTH: tl.constexpr,
    BLOCK_L: tl.constexpr,
    BUG: tl.constexpr,
):
    pid_l = tl.program_id(0)
    c = tl.program_id(1)
    t = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    acc = tl.zeros([BLOCK_L], dtype=tl.float32)
    for k in range(WIDTH):
        src = t - (WIDTH - 1) + k
        w = tl.load(w_ptr + c * WIDTH + k)
        if BUG:
            xv = tl.load(x_ptr + c * stride_c + src, mask=t < L, other=0.0)  # BUG[conv_x]
        else:
            xv = tl.load(x_ptr + c * stride_c + src, mask=(src >= 0) & (t < L), other=0.0)
        acc += w * xv
    tl.store(out_ptr + c * stride_c + t, acc, mask=t < L)


def _conv_make(dev: str, planted: bool) -> Setup:
    ch, length, width = 3, 20, 4
    ar = Arena(dev)
    w = ar.tensor((ch, width), fill=randn(ch, width, seed=20))
    x = ar.tensor((ch, length), fill=randn(ch, length, seed=21), adjacent=True)
    out = ar.tensor((ch, length))
    xr, wr = x.cpu().clone(), w.cpu().clone()

    def verify() -> None:
        ref = torch.nn.functional.conv1d(
            torch.nn.functional.pad(xr[None], (width - 1, 0)), wr[:, None, :], groups=ch
        )[0]
        if (
            planted
        ):  # channel 0 reads zeros where it read before x (suppressed); 1 and 2 read the row before
            torch.testing.assert_close(out.cpu()[0], ref[0], rtol=1e-5, atol=1e-5)
        else:
            torch.testing.assert_close(out.cpu(), ref, rtol=1e-5, atol=1e-5)

    return Setup(
        [
            Launch(
                causal_conv1d_kernel,
                (1, ch),
                (x, w, out, length, length),
                {"WIDTH": width, "BLOCK_L": 32, "BUG": int(planted)},
            )
        ],
        [out],
        verify,
        {"x_ptr": x, "w_ptr": w, "out_ptr": out},
        ar,
    )


def _conv_expect(s: Setup) -> list[Expect]:
    # channel 0 (program (0, 0)): tap k reads x[t - 3 + k]: k = 0: t = 0..2 (3 lanes, down to -3),
    # k = 1: 2 lanes, k = 2: 1 lane: 6 lanes, 12 bytes before x, in w (which x follows). Channels 1
    # and 2 read the previous channel's tail, inside x.
    return [
        Expect(
            "out_of_bounds",
            "conv_x",
            param="x_ptr",
            location="other_storage",
            other_param="w_ptr",
            before=12,
            lanes=6,
            addr=-12,
            program=(0, 0, 0),
            programs=1,
            instances=3,
            iteration=("k", 0),
        )
    ]


# ================================================================================================
# A MoE gather (vLLM's fused_moe): the padded sorted token ids must be masked
# ================================================================================================


@triton.jit
def moe_gather_kernel(
    a_ptr,
    sorted_token_ids_ptr,
    out_ptr,
    num_valid_tokens,
    K,
    TOP_K: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_K: tl.constexpr,
    BUG: tl.constexpr,
):
    pid = tl.program_id(0)
    offs_token_id = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_token = tl.load(sorted_token_ids_ptr + offs_token_id)
    token_mask = offs_token < num_valid_tokens
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_token[:, None] // TOP_K) * K + offs_k[None, :]
    if BUG:
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K, other=0.0)  # BUG[moe_a]
    else:
        a = tl.load(a_ptrs, mask=token_mask[:, None] & (offs_k[None, :] < K), other=0.0)
    tl.store(out_ptr + offs_token_id[:, None] * K + offs_k[None, :], a, mask=offs_k[None, :] < K)


def _moe_ids() -> torch.Tensor:
    perm = torch.randperm(20, generator=torch.Generator().manual_seed(22)).tolist()
    pad = 20  # the sentinel: num_valid_tokens = 10 tokens x top-2
    # three experts' blocks of 8: 5 ids + 3 pads, 8 ids, 7 ids + 1 pad
    return torch.tensor(perm[:5] + [pad] * 3 + perm[5:13] + perm[13:20] + [pad], dtype=torch.int32)


def _moe_make(dev: str, planted: bool) -> Setup:
    t, k, top_k = 10, 16, 2
    ids = _moe_ids()
    ar = Arena(dev)
    a = ar.tensor((t, k), fill=randn(t, k, seed=23))
    sid = ar.tensor(24, torch.int32, fill=ids, adjacent=True)
    out = ar.tensor((24, k))
    ar_ = a.cpu().clone()

    def verify() -> None:
        ref = torch.zeros(24, k)
        valid = ids < 20
        ref[valid] = ar_[(ids[valid] // top_k).long()]
        torch.testing.assert_close(out.cpu(), ref, rtol=0, atol=0)

    return Setup(
        [
            Launch(
                moe_gather_kernel,
                (3,),
                (a, sid, out, t * top_k, k),
                {"TOP_K": top_k, "BLOCK_M": 8, "BLOCK_K": 16, "BUG": int(planted)},
            )
        ],
        [out],
        verify,
        {"a_ptr": a, "sorted_token_ids_ptr": sid, "out_ptr": out},
        ar,
    )


def _moe_expect(s: Setup) -> list[Expect]:
    # the sentinel 20 gathers row 20 // 2 = 10 of a 10-row A: rows 5..7 of program 0 and row 7 of
    # program 2, 16 lanes each: 64 lanes, 64 bytes past A, where the sorted ids begin; first lane 5 * 16.
    return [
        Expect(
            "out_of_bounds",
            "moe_a",
            param="a_ptr",
            location="other_storage",
            other_param="sorted_token_ids_ptr",
            past=64,
            lanes=64,
            addr=640,
            program=(0, 0, 0),
            programs=2,
            instances=2,
            iteration=None,
        )
    ]


CASES = [
    Case(
        "add_overrun_into_next_tensor",
        "vector add",
        "`offs <= n`: one element past x (into y, allocated right after), past y and past out",
        _add(False),
        _add_next_expect,
    ),
    Case(
        "add_overrun_into_next_slice",
        "vector add",
        "`offs <= n` with x, y, out three rows of one tensor: x's overrun reads y, y's reads out",
        _add(True),
        _add_packed_expect,
    ),
    Case(
        "row_sum_runtime_trip_count",
        "reduction",
        "trip count (100) loaded from memory, no mask: the last trip reads 5 elements past the row",
        _trips_make,
        _trips_expect,
        features=("runtime-loops",),
    ),
    Case(
        "row_mean_loop_carried_pointer",
        "reduction",
        "`ptrs += BLOCK` with a mask computed for the first block only",
        _rowmean_make,
        _rowmean_expect,
        features=("runtime-loops",),
    ),
    Case(
        "chunked_copy_loop_carried_store",
        "copy",
        "`src += BLOCK; dst += BLOCK` with a first-block mask: the "
        "last row's load and store run past",
        _copy_make,
        _copy_expect,
        features=("runtime-loops",),
    ),
    Case(
        "reflect_pad_where_pointer",
        "padding",
        "reflection about n instead of n - 1 in a tl.where-chosen pointer",
        _reflect_make,
        _reflect_expect,
    ),
    Case(
        "row_scale_helper_depth2",
        "helpers",
        "tile loader two helpers deep without the column mask (2-D grid)",
        _depth2_make,
        _depth2_expect,
    ),
    Case(
        "transpose_2d_grid_store_mask",
        "2-D grid",
        "transpose store masked with the input's bounds",
        _transpose_make,
        _transpose_expect,
    ),
    Case(
        "persistent_tail_tile",
        "persistent",
        "grid-stride loop over tiles that assumes M % BM == 0",
        _persist_make,
        _persist_expect,
        features=("runtime-loops",),
    ),
    Case(
        "histogram_upper_edge",
        "histogram",
        "x == hi lands in bin NBINS (atomic_add one past)",
        _hist(1),
        _hist_upper_expect,
    ),
    Case(
        "histogram_below_range",
        "histogram",
        "values below lo are not dropped: negative bins (atomic_add before)",
        _hist(2),
        _hist_below_expect,
    ),
    Case(
        "embedding_out_of_vocab_id",
        "embedding",
        "ids == vocab and -1 in the data: rows past and before the table",
        _emb_make,
        _emb_expect,
    ),
    Case(
        "embedding_bwd_padding_idx",
        "embedding",
        "backward ignores padding_idx = -1: atomic_add to row -1",
        _embbwd_make,
        _embbwd_expect,
    ),
    Case(
        "dropout_seed_per_row",
        "dropout",
        "one seed in memory read as seeds[row]",
        _dropout_make,
        _dropout_expect,
    ),
    Case(
        "rope_padded_head_mask",
        "RoPE",
        "head mask with the padded head count (in place, 4 accesses)",
        _rope_make,
        _rope_expect,
    ),
    Case(
        "reshape_and_cache_padding_slot",
        "KV cache",
        "slot -1 (padding) not skipped: stores before each cache",
        _cache_make,
        _cache_expect,
    ),
    Case(
        "causal_conv1d_left_pad",
        "conv",
        "the causal left padding read from before the row",
        _conv_make,
        _conv_expect,
    ),
    Case(
        "moe_gather_padded_ids",
        "MoE",
        "the sorted token ids' padding not masked: a row past A",
        _moe_make,
        _moe_expect,
    ),
]
