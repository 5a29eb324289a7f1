# SPDX-License-Identifier: Apache-2.0
"""Real programs the GPU tests and benchmarks run under the Debugger and the Profiler: FlagGems'
operators under use_gems(), Liger-Kernel's ops forward and backward, and a small torch.compile'd
block (default and reduce-overhead). Each returns what it computed, so a caller can compare runs
with and without a tool. Third-party packages are imported here and nowhere else; a caller skips
with the reason when `missing()` names one.
"""

from __future__ import annotations

import importlib
from typing import Any


def missing(module: str) -> str | None:
    """Why `module` cannot be used here, or None."""
    try:
        importlib.import_module(module)
    except Exception as e:  # noqa: BLE001 - the reason is the message
        return f"{module} is not importable: {type(e).__name__}: {e}"
    return None


# ------------------------------------------------------------------------------------------------
# FlagGems
# ------------------------------------------------------------------------------------------------

GEMS_OPS = ("add", "mul", "gelu", "softmax", "layer_norm", "sum", "mm", "max", "exp")


def gems_inputs(seed: int = 0) -> dict[str, Any]:
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    return {
        "a": torch.randn(4096, 1000, device="cuda", generator=g),
        "b": torch.randn(4096, 1000, device="cuda", generator=g),
        "m1": torch.randn(512, 384, device="cuda", generator=g),
        "m2": torch.randn(384, 256, device="cuda", generator=g),
        "w": torch.randn(1000, device="cuda", generator=g),
        "bias": torch.randn(1000, device="cuda", generator=g),
    }


def gems_ops(t: dict[str, Any]) -> dict[str, Any]:
    """The ops of GEMS_OPS on the inputs (whatever serves PyTorch's operators now)."""
    import torch
    import torch.nn.functional as F

    a, b = t["a"], t["b"]
    return {
        "add": torch.add(a, b),
        "mul": a * b,
        "gelu": F.gelu(a),
        "softmax": torch.softmax(a, dim=-1),
        "layer_norm": F.layer_norm(a, (a.shape[-1],), t["w"], t["bias"]),
        "sum": torch.sum(a, dim=-1),
        "mm": torch.mm(t["m1"], t["m2"]),
        "max": torch.max(a, dim=-1).values,
        "exp": torch.exp(a),
    }


#: A wider set for the trust tests (at least 30 operators FlagGems serves with Triton kernels,
#: reductions with infinite identities, padding with -inf, dtype limits among them).
GEMS_WIDE = (
    "add", "sub", "mul", "div", "neg", "abs", "exp", "log", "sqrt", "rsqrt", "sigmoid",
    "tanh", "gelu", "silu", "relu", "softmax", "log_softmax", "layer_norm", "sum", "mean",
    "max", "min", "amax", "argmax", "cumsum", "mm", "bmm", "addmm", "cross_entropy",
    "where", "clamp", "pow", "embedding", "cat", "var_mean",
)


def gems_wide_ops(t: dict[str, Any]) -> dict[str, Any]:
    """The operators of GEMS_WIDE on the inputs of gems_inputs (whatever serves them now)."""
    import torch
    import torch.nn.functional as F

    a, b = t["a"], t["b"]
    pos = a.abs() + 0.5
    idx = (b.abs() * 97).long() % 1000
    return {
        "add": a + b,
        "sub": a - b,
        "mul": a * b,
        "div": a / pos,
        "neg": -a,
        "abs": a.abs(),
        "exp": torch.exp(a),
        "log": torch.log(pos),
        "sqrt": torch.sqrt(pos),
        "rsqrt": torch.rsqrt(pos),
        "sigmoid": torch.sigmoid(a),
        "tanh": torch.tanh(a),
        "gelu": F.gelu(a),
        "silu": F.silu(a),
        "relu": F.relu(a),
        "softmax": torch.softmax(a, dim=-1),
        "log_softmax": torch.log_softmax(a, dim=-1),
        "layer_norm": F.layer_norm(a, (a.shape[-1],), t["w"], t["bias"]),
        "sum": torch.sum(a, dim=-1),
        "mean": torch.mean(a, dim=0),
        "max": torch.max(a, dim=-1).values,
        "min": torch.min(a, dim=-1).values,
        "amax": torch.amax(a, dim=0),
        "argmax": torch.argmax(a, dim=-1),
        "cumsum": torch.cumsum(a[:64], dim=-1),
        "mm": torch.mm(t["m1"], t["m2"]),
        "bmm": torch.bmm(t["m1"].view(4, 128, 384), t["m2"].expand(4, 384, 256)),
        "addmm": torch.addmm(t["m2"][0], t["m1"], t["m2"]),
        "cross_entropy": F.cross_entropy(a[:512], idx[:512, 0]),
        "where": torch.where(a > 0, a, b),
        "clamp": torch.clamp(a, -0.5, 0.5),
        "pow": torch.pow(pos, 1.5),
        "embedding": F.embedding(idx[:64, :8], t["m1"]),
        "cat": torch.cat([a[:100], b[:100]], dim=0),
        "var_mean": torch.var_mean(a, dim=-1)[0],
    }


def gems_wide_run(t: dict[str, Any]) -> dict[str, Any]:
    import flag_gems
    import torch

    with flag_gems.use_gems():
        out = gems_wide_ops(t)
    torch.cuda.synchronize()
    return out


def gems_run(t: dict[str, Any]) -> dict[str, Any]:
    import flag_gems
    import torch

    with flag_gems.use_gems():
        out = gems_ops(t)
    torch.cuda.synchronize()
    return out


# ------------------------------------------------------------------------------------------------
# Liger-Kernel
# ------------------------------------------------------------------------------------------------


def liger_inputs(seed: int = 0) -> dict[str, Any]:
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    bt, h, v = 256, 1000, 3000
    return {
        "x": torch.randn(bt, h, device="cuda", generator=g),
        "w": torch.randn(h, device="cuda", generator=g),
        "bias": torch.randn(h, device="cuda", generator=g),
        "gate": torch.randn(bt, 2048, device="cuda", generator=g),
        "up": torch.randn(bt, 2048, device="cuda", generator=g),
        "logits": torch.randn(bt, v, device="cuda", generator=g),
        "target": torch.randint(0, v, (bt,), device="cuda", generator=g),
        "q": torch.randn(2, 8, 128, 64, device="cuda", generator=g),
        "k": torch.randn(2, 4, 128, 64, device="cuda", generator=g),
        "cos": torch.randn(1, 128, 64, device="cuda", generator=g),
        "sin": torch.randn(1, 128, 64, device="cuda", generator=g),
    }


def liger_pass(t: dict[str, Any]) -> dict[str, Any]:
    """RMSNorm, LayerNorm, SwiGLU, CrossEntropy and RoPE, forward and backward."""
    import torch
    from liger_kernel.ops.cross_entropy import LigerCrossEntropyFunction
    from liger_kernel.ops.layer_norm import LigerLayerNormFunction
    from liger_kernel.ops.rms_norm import LigerRMSNormFunction
    from liger_kernel.ops.rope import LigerRopeFunction
    from liger_kernel.ops.swiglu import LigerSiLUMulFunction

    leaf = {k: v.detach().clone().requires_grad_(v.is_floating_point()) for k, v in t.items()}
    out: dict[str, Any] = {}
    y = LigerRMSNormFunction.apply(leaf["x"], leaf["w"], 1e-6)
    y.sum().backward()
    out["rms"], out["rms_dx"] = y.detach(), leaf["x"].grad.detach().clone()
    leaf["x"].grad = None
    y = LigerLayerNormFunction.apply(leaf["x"], leaf["w"], leaf["bias"], 1e-6)
    y.sum().backward()
    out["ln"], out["ln_dx"] = y.detach(), leaf["x"].grad.detach().clone()
    y = LigerSiLUMulFunction.apply(leaf["gate"], leaf["up"])
    y.sum().backward()
    out["swiglu"], out["swiglu_dg"] = y.detach(), leaf["gate"].grad.detach().clone()
    loss = LigerCrossEntropyFunction.apply(leaf["logits"], leaf["target"], None)[0]
    loss.backward()
    out["ce"], out["ce_dx"] = loss.detach(), leaf["logits"].grad.detach().clone()
    q, k = LigerRopeFunction.apply(leaf["q"], leaf["k"], leaf["cos"], leaf["sin"])
    (q.sum() + k.sum()).backward()
    out["rope_q"], out["rope_dq"] = q.detach(), leaf["q"].grad.detach().clone()
    torch.cuda.synchronize()
    return out


# ------------------------------------------------------------------------------------------------
# torch.compile
# ------------------------------------------------------------------------------------------------


def compiled_block(mode: str | None = None, seed: int = 0) -> tuple[Any, Any]:
    """(compiled module, input): LayerNorm, Linear, GELU, Linear, residual add."""
    import torch

    torch.manual_seed(seed)

    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.norm = torch.nn.LayerNorm(256)
            self.up = torch.nn.Linear(256, 512)
            self.down = torch.nn.Linear(512, 256)

        def forward(self, x: Any) -> Any:
            return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))

    m = Block().cuda().eval()
    x = torch.randn(64, 256, device="cuda")
    return torch.compile(m, mode=mode), x
