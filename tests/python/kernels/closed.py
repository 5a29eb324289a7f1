# SPDX-License-Identifier: Apache-2.0
"""Index arithmetic in the forms the Debugger records in closed form (docs/formats/record-format.md,
"Closed-form records"), and some that look alike but must take the ordinary path."""

import numpy as np
import triton
import triton.language as tl

import flagprism.language as fpl


@triton.jit
def forms_kernel(out_ptr, n, base, s64, BLOCK: tl.constexpr, K: tl.constexpr):
    fpl.collect_start()
    pid = tl.program_id(0)
    a = tl.arange(0, BLOCK) + pid * BLOCK
    b = pid * BLOCK + 2 * tl.arange(0, BLOCK)
    c = tl.arange(0, BLOCK) * K + 3
    d = base + tl.arange(0, BLOCK)
    e = s64 + tl.arange(0, BLOCK)
    f = -3 * tl.arange(0, BLOCK)
    h = tl.arange(4, BLOCK + 4)
    m1 = n > a
    m2 = b <= n
    m3 = d >= 0
    m4 = f > -n
    m5 = e < s64 + 5
    e2 = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m6 = e2 < n
    a2 = tl.arange(0, BLOCK) + pid * BLOCK
    m7 = a2 < 2.5
    g = a + tl.arange(0, BLOCK)
    tl.store(out_ptr + a, g, mask=m1)
    tl.store(out_ptr + b, g, mask=m2)
    tl.store(out_ptr + c, g)
    tl.store(out_ptr + e2, g, mask=m6)
    tl.store(out_ptr + a2, g, mask=m7)
    fpl.collect_end()


# recorded in closed form (m7 compares with a float: an ordinary record, and so is the address
# record of the store under it)
CLOSED = {"a", "b", "c", "d", "e", "f", "h", "m1", "m2", "m3", "m4", "m5", "e2", "m6", "a2"}
OPEN_ACCESSES = {"out_ptr + a2"}
# each store's offsets name -> its mask name
STORES = {"a": "m1", "b": "m2", "c": None, "e2": "m6", "a2": "m7"}


def reference(pid, n, base, s64, block, k):
    """NumPy values of every observed name of forms_kernel for program pid, with the device's
    int32 wrap-around."""
    i = np.arange(block, dtype=np.int64)

    def i32(v):
        return ((np.asarray(v, dtype=np.int64) + (1 << 31)) % (1 << 32) - (1 << 31)).astype(np.int32)

    a = i32(i + pid * block)
    b = i32(pid * block + 2 * i)
    c = i32(i * k + 3)
    d = i32(base + i)
    e = i32(s64 + i) if -(1 << 31) <= s64 < (1 << 31) else (s64 + i).astype(np.int64)  # Triton's i32/i64 arg
    f = i32(-3 * i)
    h = i32(i + 4)
    vals = {"pid": np.int32(pid), "a": a, "b": b, "c": c, "d": d, "e": e, "f": f, "h": h,
            "m1": n > a, "m2": b <= n, "m3": d >= 0, "m4": f > -n, "m5": e < s64 + 5, "g": i32(a.astype(np.int64) + i)}
    vals["e2"] = pid * block + i  # int64
    vals["m6"] = vals["e2"] < n
    vals["a2"] = a
    vals["m7"] = a < 2.5
    return vals


def out_size(n, block, k, programs):
    return max(n + 1, programs * block + 2 * block, (block - 1) * k + 4)
