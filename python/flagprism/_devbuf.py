# SPDX-License-Identifier: Apache-2.0
"""FlagPrism's own device buffers (the Debugger's record buffers, the timelines' buffers):
allocate one zeroed with its header words, and read it back, without running a framework
operator on it.

The framework's allocator owns the memory (``torch.empty``, which launches nothing); zeroing,
the header and the copy back go through the vendor driver in C (``_ext.devmem_*``,
<flagprism/devmem.h>) on NVIDIA GPUs and through NumPy on the interpreter's host tensors. Only
where neither applies (another accelerator) are PyTorch operators used, inside
``_intercept.internal()`` so that no FlagPrism tool observes or records them. This matters when a
kernel library serves PyTorch's operators with Triton kernels (FlagGems serves ``torch.zeros``
with one): the Debugger would otherwise instrument its own buffer's initialisation, recursively.
"""

from __future__ import annotations

import struct
from typing import Any

from flagprism import _intercept

_driver: tuple[bool, str | None] | None = None


def _driver_ok() -> bool:
    global _driver
    if _driver is None:
        try:
            from flagprism import _ext  # type: ignore[attr-defined]

            _driver = tuple(_ext.devmem_available())  # type: ignore[assignment]
        except Exception as e:  # noqa: BLE001 - an extension without the part: use the fallback
            _driver = (False, f"{type(e).__name__}: {e}")
    return bool(_driver[0])


def _is_nvidia(device: Any) -> bool:
    import torch

    return device.type == "cuda" and getattr(torch.version, "hip", None) is None


_raw_stream: Any = None  # torch._C._cuda_getCurrentRawStream, False where absent


def _stream(device: Any) -> int:
    """The raw handle of the current stream of `device` (torch.cuda.current_stream(device)
    .cuda_stream, without making a Stream object: once per instrumented launch)."""
    import torch

    global _raw_stream
    f = _raw_stream
    if f is None:
        f = _raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or False
    if f and device.type == "cuda":
        idx = device.index
        return int(f(torch.cuda.current_device() if idx is None else idx))
    return int(torch.cuda.current_stream(device).cuda_stream)


def new(words: int, header: list[int], device: Any) -> Any:
    """An int64 tensor of `words` words on `device`: `header` first, zeros after."""
    import torch

    with _intercept.internal():
        buf = torch.empty(words, dtype=torch.int64, device=device)
        if device.type == "cpu":
            arr = buf.numpy()
            arr[:] = 0
            arr[: len(header)] = header
            return buf
        if _is_nvidia(device) and _driver_ok():
            from flagprism import _ext  # type: ignore[attr-defined]

            stream = _stream(device)
            _ext.devmem_zero(buf.data_ptr(), words * 8, stream)
            _ext.devmem_write(buf.data_ptr(), struct.pack(f"<{len(header)}q", *header), stream)
            return buf
        buf.zero_()
        buf[: len(header)].copy_(torch.tensor(header, dtype=torch.int64))
        return buf


def read(buf: Any) -> Any:
    """The buffer's words on the host (a NumPy int64 array), after the work queued before."""
    import numpy as np

    with _intercept.internal():
        dev = buf.device
        if dev.type == "cpu":
            return buf.detach().numpy()
        if _is_nvidia(dev) and _driver_ok():
            from flagprism import _ext  # type: ignore[attr-defined]

            out = np.empty(buf.numel(), dtype=np.int64)
            _ext.devmem_read_into(out, buf.data_ptr(), _stream(dev))
            return out
        return buf.detach().cpu().numpy()
