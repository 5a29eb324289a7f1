# SPDX-License-Identifier: Apache-2.0
"""The source rewriter: twin text, line numbers, site and statement tables, and the errors it
raises for markers and constructs it cannot instrument."""

from __future__ import annotations

import ast
import inspect
import os
import re

import pytest

pytest.importorskip("triton")

from kernels import bad_markers, control, layernorm, matmul, vector_add  # noqa: E402

from flagprism import _rewrite  # noqa: E402
from flagprism._rewrite import MarkerError, UnsupportedError  # noqa: E402


def _user_lines(jitfn):
    path = jitfn.fn.__code__.co_filename
    with open(path) as f:
        return f.read().split("\n")


def test_body_lines_keep_their_numbers():
    tw = _rewrite.rewrite(vector_add.add_kernel, 1, 1)
    twin = tw.text.split("\n")
    user = _user_lines(vector_add.add_kernel)
    for st in tw.statements:
        # the instrumented line holds the statement's code, at the same line as in the user file
        body = ast.unparse(ast.parse(st.source.strip()))
        assert body.split("(")[0] in twin[st.line - 1], (st.line, twin[st.line - 1])
        assert user[st.line - 1].strip().startswith(st.source.split("\n")[0].strip())
    # every line the user wrote that was not instrumented is unchanged
    instrumented = {st.line for st in tw.statements}
    multi = {ln for st in tw.statements for ln in range(st.line + 1, st.end_line + 1)}
    def_line = vector_add.add_kernel.fn.__code__.co_firstlineno + 1  # after the decorator
    end = def_line + len(inspect.getsourcelines(vector_add.add_kernel.fn)[0]) - 1
    for ln in range(def_line + 1, end):
        if ln in instrumented:
            continue
        if ln in multi:
            assert twin[ln - 1] == ""
        else:
            assert twin[ln - 1] == user[ln - 1], ln
    # the header moved one line up, the prologue sits on the old `def` line
    assert twin[def_line - 2].startswith("def add_kernel(") and "__fp_ctx" in twin[def_line - 2]
    assert "__fp_begin(__fp_ctx, " in twin[def_line - 1]  # the record slots' word: after checks


def test_twin_text_compiles_and_is_content_addressed(tmp_path, monkeypatch):
    monkeypatch.setenv("FLAGPRISM_CACHE_DIR", str(tmp_path))
    tw = _rewrite.rewrite(vector_add.add_kernel, 1, 1)
    compile(tw.text, "twin.py", "exec")
    p1 = _rewrite.write_twin_file(tw)
    p2 = _rewrite.write_twin_file(tw)
    assert p1 == p2 and p1.startswith(str(tmp_path)) and open(p1).read() == tw.text
    tw2 = _rewrite.rewrite(vector_add.add_kernel, 2, 2)
    assert _rewrite.write_twin_file(tw2) != p1


def test_site_table_schema():
    tw = _rewrite.rewrite(vector_add.add_kernel, 1, 1)
    st = tw.site_table()
    assert (
        st["version"] == 1 and st["kernel"] == "add_kernel" and st["file"].endswith("vector_add.py")
    )
    assert st["level"] == 1 and st["addr_level"] == 1
    for s in st["statements"]:
        assert set(s) == {"id", "line", "col", "end_line", "source", "loop_depth"}
    for s in st["sites"]:
        # findings inputs (role, base_param(s), ...) come on top: test_findings.py checks them
        assert {"id", "statement", "kind", "name", "reads"} <= set(s)
        assert set(s) <= {
            "id",
            "statement",
            "kind",
            "name",
            "reads",
            "role",
            "target_dtype",
            "other",
            "load_site",
            "base_param",
            "base_params",
            "checks",
        }
    assert [s["id"] for s in st["sites"]] == list(range(1, len(st["sites"]) + 1))
    kinds = [(s["kind"], s["name"]) for s in st["sites"]]
    assert kinds == [
        ("value", "pid"),
        ("value", "offs"),
        ("value", "mask"),
        ("load", "x_ptr + offs"),
        ("value", "x"),
        ("load", "y_ptr + offs"),
        ("value", "y"),
        ("value", "out"),
        ("store", "out_ptr + offs"),
        ("value", "out"),
    ]
    two_line = [s for s in st["statements"] if s["end_line"] > s["line"]]
    assert len(two_line) == 1 and two_line[0]["source"].count("\n") == 1
    assert two_line[0]["source"].split("\n")[1].startswith("                mask=mask")
    out_site = st["sites"][7]
    assert out_site["reads"] == ["x", "y"]
    assert st["statements"][0]["col"] == 4


def test_levels_select_sites():
    only_addr = _rewrite.rewrite(vector_add.add_kernel, 0, 1)
    assert {s.kind for s in only_addr.sites} == {"load", "store"}
    only_val = _rewrite.rewrite(vector_add.add_kernel, 1, 0)
    assert {s.kind for s in only_val.sites} == {"value"}
    dumps = _rewrite.rewrite(vector_add.add_kernel, 2, 1)
    assert all(s.dumps == (s.kind == "value") for s in dumps.sites)


def test_loop_depth_and_loops():
    tw = _rewrite.rewrite(layernorm.layernorm_kernel, 1, 1)
    depths = {s.source.split("=")[0].strip(): s.loop_depth for s in tw.statements}
    assert depths["acc"] == 0 and depths["cols"] == 1 and depths["mean"] == 0
    assert len(tw.loops) == 3 and all(lp.range_args == ["0", "N", "BLOCK"] for lp in tw.loops)
    in_loops = [s for s in tw.sites if s.loops]
    assert in_loops and all(len(s.loops) == 1 for s in in_loops)


def test_multi_statement_line_and_marker_overrides():
    tw = _rewrite.rewrite(control.two_regions_kernel, 1, 1)
    lines = tw.text.split("\n")
    (z_stmt,) = [s for s in tw.statements if s.source.startswith("z = ")]
    store = [s for s in tw.statements if s.source.startswith("tl.store")][0]
    assert z_stmt.line == store.line  # two statements on one line, both observed
    assert lines[z_stmt.line - 1].count("tl.store(") == 1
    assert tw.level == 2 and tw.addr_level == 1


def test_matmul_multiline_loads_hoisted_in_order():
    tw = _rewrite.rewrite(matmul.matmul_kernel, 1, 1)
    a_stmt = next(s for s in tw.statements if s.source.startswith("a = tl.load"))
    line = tw.text.split("\n")[a_stmt.line - 1]
    assert line.index("__fp_addr(") < line.index("a = tl.load(") < line.index("__fp_value(")
    assert tw.text.split("\n")[a_stmt.line] == ""  # the continuation line is blank now


def _err(fn):
    with pytest.raises(_rewrite.RewriteError) as ei:
        _rewrite.rewrite(fn, 1, 1)
    return ei.value


def _line_of(fn, needle, nth=0):
    lines, first = inspect.getsourcelines(fn.fn)
    hits = [first + i for i, ln in enumerate(lines) if needle in ln]
    return hits[nth]


@pytest.mark.parametrize(
    "kernel,cls,needle,nth,words",
    [
        ("unbalanced_start", MarkerError, "fpl.collect_start()", 0, "without a matching"),
        ("unbalanced_end", MarkerError, "fpl.collect_end()", 0, "without a matching"),
        ("nested_markers", MarkerError, "fpl.collect_start()", 1, "nested"),
        ("different_blocks", MarkerError, "fpl.collect_end()", 0, "same block"),
        ("nested_in_block", MarkerError, "fpl.collect_start()", 1, "nested"),
        ("return_in_region", UnsupportedError, "        return", 0, "return"),
        ("load_in_boolop", UnsupportedError, "FLAG and", 0, "conditional"),
        ("marker_as_value", MarkerError, "y = fpl.collect_end()", 0, "statements of their own"),
        ("bad_level", MarkerError, "collect_start(level=L)", 0, "literal"),
    ],
)
def test_marker_and_construct_errors(kernel, cls, needle, nth, words):
    fn = getattr(bad_markers, kernel)
    e = _err(fn)
    assert isinstance(e, cls), repr(e)
    assert e.file.endswith("bad_markers.py")
    assert e.line == _line_of(fn, needle, nth), str(e)
    assert re.search(words, str(e)), str(e)
    assert str(e).startswith(f"{e.file}:{e.line}: ")


def test_no_markers_is_an_error_for_rewrite_but_not_detected():
    assert not _rewrite.has_markers(vector_add.add_plain)
    with pytest.raises(MarkerError, match="no fpl.collect_start"):
        _rewrite.rewrite(vector_add.add_plain, 1, 1)


def test_reserved_names(tmp_path):
    src = tmp_path / "reserved_kernel.py"
    src.write_text(
        "import triton\nimport triton.language as tl\nimport flagprism.language as fpl\n\n\n"
        "@triton.jit\ndef k(x_ptr):\n    fpl.collect_start()\n    __fp_n = tl.load(x_ptr)\n"
        "    fpl.collect_end()\n"
    )
    import importlib.util

    spec = importlib.util.spec_from_file_location("reserved_kernel", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(UnsupportedError, match="reserved"):
        _rewrite.rewrite(mod.k, 1, 1)


def test_twin_options_copied(tmp_path):
    import triton

    from flagprism import debugger

    tw = _rewrite.build(
        control.specialised_kernel, 1, 1, debugger._helpers(control.specialised_kernel, "np")
    )
    assert tw.jit.arg_names[-1] == "__fp_ctx"
    assert tw.jit.arg_names[:-1] == control.specialised_kernel.arg_names
    assert type(tw.jit) is type(control.specialised_kernel)
    assert getattr(tw.jit, "_fp_twin", False)
    assert inspect.getsourcelines(tw.fn)[1] == control.specialised_kernel.fn.__code__.co_firstlineno
    del triton, tmp_path


def test_sources_with_env_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("FLAGPRISM_CACHE_DIR", str(tmp_path / "c"))
    assert str(_rewrite.twin_cache_dir()).startswith(str(tmp_path / "c"))
    assert os.path.basename(str(_rewrite.twin_cache_dir())) == "twins"
