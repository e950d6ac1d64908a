"""``generate`` streams rendered files into the writer: the guarantees of a whole-tree write still hold.

Files reach the temporary tree while later devices are still rendering, so these
tests fail a render (or a path) late in the stream and look at what is left.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import fabgen.targets.render as render_module
from fabgen.errors import OutputError
from fabgen.pipeline import generate, load_spec
from fabgen.targets.base import RenderContext, Target
from fabgen.writer import MANIFEST, TreeWriter
from tests.helpers import example

LAB = example("lab")


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _patch_targets(monkeypatch: pytest.MonkeyPatch,
                   wrap: Callable[[Target, Callable[[RenderContext, Any], dict[str, str]]],
                                  Callable[[RenderContext, Any], dict[str, str]]], checked: bool = True) -> None:
    """Every selected target renders through ``wrap(target, its render)`` (and, unless ``checked``, unchecked).

    ``render_many`` is dropped: it would render past the wrapped per-device ``render``.
    """
    from fabgen.targets.registry import select_targets as real

    def select(names: Any = None) -> list[Target]:
        return [dataclasses.replace(t, render=wrap(t, t.render), check=t.check if checked else None, render_many=None)
                for t in real(names)]

    monkeypatch.setattr(render_module, "select_targets", select)


def _temporaries(out: Path) -> list[Path]:
    return list(out.parent.glob(f".{out.name}.fabgen-*"))


def test_files_reach_the_temporary_tree_before_the_last_render(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Streaming is real: when a late device renders, earlier files are on disk already (not held in memory)."""
    out = tmp_path / "out"
    seen: list[int] = []

    def wrap(target: Target, render: Callable[[RenderContext, Any], dict[str, str]]) -> Any:
        def wrapped(context: RenderContext, device: Any) -> dict[str, str]:
            seen.append(sum(len(files) for _, _, files in os.walk(tmp_path)))
            return render(context, device)
        return wrapped

    _patch_targets(monkeypatch, wrap)
    generate(load_spec(LAB), out)
    assert seen[0] == 0 and seen[-1] > len(seen) // 2, seen
    assert not _temporaries(out)


def test_late_render_failure_leaves_the_old_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    spec = load_spec(LAB)
    generate(spec, out)
    before = _tree(out)
    mtimes = {p: os.stat(out / p).st_mtime_ns for p in before}
    calls = {"n": 0}

    def wrap(target: Target, render: Callable[[RenderContext, Any], dict[str, str]]) -> Any:
        def wrapped(context: RenderContext, device: Any) -> dict[str, str]:
            calls["n"] += 1
            files = render(context, device)
            if target.name == "install-switches":  # rendered last: the others are in the temp tree
                from jinja2 import UndefinedError

                raise UndefinedError("late failure")
            return {p: t.replace("\n", "\n#changed\n", 1) for p, t in files.items()}
        return wrapped

    _patch_targets(monkeypatch, wrap)
    with pytest.raises(OutputError, match="late failure"):
        generate(spec, out)
    assert calls["n"] > 10  # many devices rendered (and were written to the temp tree) before the failure
    assert _tree(out) == before
    assert {p: os.stat(out / p).st_mtime_ns for p in before} == mtimes
    assert not _temporaries(out)


def test_render_problem_is_said_before_an_unsafe_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first device yields an unsafe path, a later one fails its template: the template error is reported,
    as when every file was rendered before anything was written."""
    out = tmp_path / "out"
    first = {"done": False}

    def wrap(target: Target, render: Callable[[RenderContext, Any], dict[str, str]]) -> Any:
        def wrapped(context: RenderContext, device: Any) -> dict[str, str]:
            files = render(context, device)
            if not first["done"]:
                first["done"] = True
                return {"../escape.txt": "x\n", **files}
            if target.name == "install-switches":
                from jinja2 import UndefinedError

                raise UndefinedError("template at fault")
            return files
        return wrapped

    _patch_targets(monkeypatch, wrap, checked=False)
    with pytest.raises(OutputError, match="template at fault"):
        generate(load_spec(LAB), out)
    assert not out.exists() and not _temporaries(out)
    monkeypatch.undo()

    _patch_targets(monkeypatch, lambda target, render: (
        lambda context, device: {"../escape.txt": "x\n", **render(context, device)}), checked=False)
    with pytest.raises(OutputError, match="refusing unsafe output path"):
        generate(load_spec(LAB), out)
    assert not out.exists() and not _temporaries(out)


def test_parallel_stream_writes_the_same_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Worker batches arrive in slice order: with small batches the tree is still byte-identical."""
    spec = load_spec(LAB)
    generate(spec, tmp_path / "one")
    monkeypatch.setattr(render_module, "PARALLEL_THRESHOLD", 1)
    monkeypatch.setattr(render_module, "_BATCH", 3)
    generate(spec, tmp_path / "two", jobs=2)
    assert _tree(tmp_path / "one") == _tree(tmp_path / "two")


def test_a_killed_worker_fails_the_run_and_leaves_the_old_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``-j 2`` with a worker killed mid-render (as the OOM killer would): one error, not a wait for a result that
    never comes, and the tree as it was."""
    import signal

    from fabgen.errors import FabgenError

    out = tmp_path / "out"
    spec = load_spec(LAB)
    generate(spec, out)
    before = _tree(out)
    render_slice = render_module._render_slice

    def killed(inputs: Any, low: int, high: int) -> Any:
        if low == 0:
            os.kill(os.getpid(), signal.SIGKILL)
        return render_slice(inputs, low, high)

    monkeypatch.setattr(render_module, "PARALLEL_THRESHOLD", 1)
    monkeypatch.setattr(render_module, "_render_slice", killed)
    with pytest.raises(FabgenError, match="a worker process of -j 2 ended without its result"):
        generate(spec, out, jobs=2)
    assert _tree(out) == before
    assert not _temporaries(out)


def test_tree_writer_keeps_the_last_of_a_twice_given_path(tmp_path: Path) -> None:
    out = tmp_path / "out"
    writer = TreeWriter(out, {"fabgen_version": "test"})
    writer.add("a/x.txt", b"first\n", ("t", "d1"))
    writer.add("b.txt", b"b\n", ("t", "d1"))
    writer.add("a/x.txt", b"second\n", ("u", "d2"))
    result = writer.finish()
    assert result.written == ["a/x.txt", "b.txt"]
    assert (out / "a/x.txt").read_bytes() == b"second\n"
    entry = json.loads((out / MANIFEST).read_text())["files"]["a/x.txt"]
    assert entry == {"sha256": hashlib.sha256(b"second\n").hexdigest(), "bytes": 7, "target": "u", "device": "d2"}


def test_tree_writer_abort_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("operator's\n")
    writer = TreeWriter(out, {"fabgen_version": "test"})
    writer.add("a.txt", b"a\n", ("t", "d"))
    with pytest.raises(OutputError, match="no fabgen manifest"):
        writer.finish()
    assert _tree(out) == {"mine.txt": b"operator's\n"} and not _temporaries(out)


@pytest.mark.parametrize("entries, meta", [
    ({}, {"fabgen_version": "x"}),
    ({"a/\u00e9.txt": {"sha256": "ab", "bytes": 3, "target": 't"x', "device": "d\n"},
      "b": {"sha256": "s", "bytes": True, "target": "t", "device": "d"},
      "c": {"sha256": "s", "extra": [1, {"x": 2}], "target": "t", "device": "d"}},
     {"fabgen_version": "1", "cluster": 'a\n  "files": 0', "spec_sha256": "z"}),
])
def test_manifest_is_json_dumps_byte_for_byte(entries: dict[str, dict[str, object]], meta: dict[str, object]) -> None:
    """The hand-printed manifest equals the indented ``json.dumps`` it replaces, odd kept entries and names included."""
    from fabgen.writer import _manifest_bytes

    expected = json.dumps({"generator": "fabgen", **meta, "files": dict(sorted(entries.items()))},
                          indent=2, sort_keys=True) + "\n"
    assert _manifest_bytes(entries, meta) == expected.encode()


def test_writer_entries_print_as_json_dumps_with_odd_owners(tmp_path: Path) -> None:
    """TreeWriter keeps its entries as tuples printed by one format string; the bytes are still ``json.dumps``'s,
    for owners that JSON must escape (quotes, a backslash, a newline, non-ASCII) and files mixed with kept entries."""
    from fabgen.writer import _manifest_bytes

    writer = TreeWriter(tmp_path / "out", {"fabgen_version": "test"})
    owners = {"a.txt": ('t"x', "d\\e"), "b/c.txt": ("t\n", "\u00e9\u2028"), "b/d.txt": ("", "")}
    for path, owner in owners.items():
        writer.add(path, path.encode() * 3, owner)
    kept = {"k.txt": {"sha256": "00", "bytes": 1, "target": "t", "device": "d"}}
    expected_files = {path: {"sha256": hashlib.sha256(path.encode() * 3).hexdigest(), "bytes": len(path) * 3,
                             "target": target, "device": device} for path, (target, device) in owners.items()}
    expected = json.dumps({"generator": "fabgen", "fabgen_version": "test",
                           "files": dict(sorted({**expected_files, **kept}.items()))}, indent=2, sort_keys=True) + "\n"
    assert _manifest_bytes({**writer.entries, **kept}, writer.meta) == expected.encode()
    writer.finish()
    manifest = (tmp_path / "out" / MANIFEST).read_bytes()
    assert json.loads(manifest)["files"] == expected_files
    writer_alone = json.dumps({"generator": "fabgen", "fabgen_version": "test", "files": expected_files},
                              indent=2, sort_keys=True) + "\n"
    assert manifest == writer_alone.encode()


def test_tuple_entries_with_paths_json_escapes_print_as_json_dumps() -> None:
    """Paths are printed unquoted only when all of them are plain; one path JSON escapes sends every path
    through the quoting, tuple entries and kept mappings alike, and the bytes stay ``json.dumps``'s."""
    from fabgen.writer import _manifest_bytes

    plain = {"a/b.txt": ("ab", 1, "t", "d"), "c": {"sha256": "s", "bytes": 2, "target": "t", "device": "d"}}
    for odd in ({}, {'x/"q': ("cd", 2, "t", "d")}, {"\u00e9": ("ef", 3, "t", "d")}, {"a\\b": ("00", 0, "", "")}):
        entries: dict[str, Any] = {**plain, **odd}
        as_dicts = {p: e if isinstance(e, dict) else dict(zip(("sha256", "bytes", "target", "device"), e, strict=True))
                    for p, e in entries.items()}
        expected = json.dumps({"generator": "fabgen", "fabgen_version": "1", "files": as_dicts},
                              indent=2, sort_keys=True) + "\n"
        assert _manifest_bytes(entries, {"fabgen_version": "1"}) == expected.encode()


def test_a_short_write_is_completed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``os.write`` may take less than it was given (a signal, a pipe-like file): the rest follows, nothing is lost."""
    import fabgen.writer as writer_module

    real_write = os.write
    calls: list[int] = []

    def at_most_5(fd: int, data: bytes | memoryview) -> int:
        calls.append(len(data))
        return real_write(fd, bytes(data[:5]))

    monkeypatch.setattr(writer_module.os, "write", at_most_5)
    data = bytes(range(23))
    writer_module._write_new(str(tmp_path / "f"), data)
    assert (tmp_path / "f").read_bytes() == data
    assert calls == [23, 18, 13, 8, 3]
