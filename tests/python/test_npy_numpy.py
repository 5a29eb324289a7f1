# SPDX-License-Identifier: Apache-2.0
"""NumPy reads what the C .npy writer writes.

The C unit test `npy_write_samples` writes one .npy file per dtype into $FP_NPY_OUT, each with a
.txt sidecar giving the dtype name, the shape and every element's raw bits. Here the expected
array is rebuilt from those bits with NumPy alone and compared bit for bit with numpy.load()'s
result; the whole file is also compared with what numpy.save() writes for the same array.
Needs the unit-test runner ($FP_UNIT_TESTS, via the `unit_tests` fixture); skipped without it.
"""

from __future__ import annotations

import io
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

# dtype name (fp_dtype_name) -> (dtype numpy must load, unsigned type of the raw bits)
EXPECTED: dict[str, tuple[str, str]] = {
    "bool": ("|b1", "u1"),
    "int8": ("|i1", "u1"),
    "int16": ("<i2", "<u2"),
    "int32": ("<i4", "<u4"),
    "int64": ("<i8", "<u8"),
    "uint8": ("|u1", "u1"),
    "uint16": ("<u2", "<u2"),
    "uint32": ("<u4", "<u4"),
    "uint64": ("<u8", "<u8"),
    "float16": ("<f2", "<u2"),
    "bfloat16": ("<f4", "<u2"),  # widened: bits become the upper half of a float32
    "float32": ("<f4", "<u4"),
    "float64": ("<f8", "<u8"),
}

SAMPLES = [*EXPECTED, "float64_empty"]


@pytest.fixture(scope="module")
def samples(unit_tests: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("npy")
    env = dict(os.environ, FP_NPY_OUT=str(out))
    proc = subprocess.run(
        [str(unit_tests), "npy_write_samples"], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def _expected(sidecar: Path) -> np.ndarray:
    fields = {}
    for line in sidecar.read_text().splitlines():
        key, _, rest = line.partition(" ")
        fields[key] = rest.split()
    (dtype_name,) = fields["dtype"]
    shape = tuple(int(d) for d in fields["shape"])
    load_dtype, bits_dtype = EXPECTED[dtype_name]
    bits = np.array([int(b, 16) for b in fields["bits"]], dtype=bits_dtype)
    if dtype_name == "bfloat16":
        bits = bits.astype("<u4") << np.uint32(16)
    return bits.view(load_dtype).reshape(shape)


@pytest.mark.parametrize("name", SAMPLES)
def test_numpy_loads_bit_exact(samples: Path, name: str) -> None:
    path = samples / f"{name}.npy"
    assert path.is_file(), f"{name}.npy was not written"
    want = _expected(samples / f"{name}.txt")
    got = np.load(path)
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    assert got.tobytes() == want.tobytes()  # bit-exact: -0.0, NaN payloads, subnormals


@pytest.mark.parametrize("name", SAMPLES)
def test_file_identical_to_numpy_save(samples: Path, name: str) -> None:
    data = (samples / f"{name}.npy").read_bytes()
    buf = io.BytesIO()
    np.save(buf, np.load(samples / f"{name}.npy"))
    assert data == buf.getvalue()


def test_known_values(samples: Path) -> None:
    f32 = np.load(samples / "float32.npy")
    assert f32[0, 0] == 1.5 and np.signbit(f32[0, 1]) and np.isposinf(f32[1, 0])
    bf = np.load(samples / "bfloat16.npy")
    assert bf.dtype == np.float32
    assert bf[0, 0] == 1.0 and bf[0, 1] == -3.0 and bf[0, 2] == np.float32(2.0**-133)
    assert np.isnan(bf[1, 2]) and bf[1, 2].view(np.uint32) == 0x7FC10000
    f16 = np.load(samples / "float16.npy")
    assert f16[1, 0] == 65504.0 and f16[1, 1] == np.float16(2.0**-24)
    i32 = np.load(samples / "int32.npy")
    assert i32.shape == () and int(i32) == -123456789
    i64 = np.load(samples / "int64.npy")
    assert i64.tolist() == [-(2**63), 0, 2**63 - 1]
    assert np.load(samples / "uint64.npy").tolist() == [0, 2**64 - 1]
    assert np.load(samples / "bool.npy").tolist() == [[False, True, True], [False, True, False]]
    assert np.load(samples / "float64_empty.npy").shape == (0, 3)
