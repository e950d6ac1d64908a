"""The bad-input corpus: every file in ``tests/bad_specs`` is refused cleanly.

Each case is a spec file whose leading comment lines say what fabgen must say:

    # what the case is about (free text)
    # expect: a substring of one problem line      (one or more)
    # path: the data path named by a problem line  (optional: ``(at PATH)``)
    # at: LINE:COL of the first problem line       (optional)

A file that cannot carry a comment (the empty file) has its header in
``NAME.expect`` beside it. For every case ``fabgen generate`` must exit 2,
print only problem lines (``FILE[:LINE:COL]: message``), no traceback, leave a
previously generated output directory byte for byte as it was (and no
temporary directories beside it), and answer within TIME_LIMIT (a hang guard).
"""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest

from fabgen.source import MAX_BYTES
from tests.helpers import ROOT, example, run_cli

CORPUS = ROOT / "tests" / "bad_specs"
CASES = sorted(CORPUS.glob("*.yaml"))
TIME_LIMIT = 60.0  # a hang guard, far above any machine's time (speed is bench/'s job)
"""Catches a hang or a runaway, not a benchmark (the slowest case, deep nesting, takes ~2 s on a loaded 2-core CI)."""
PROBLEM_LINE = re.compile(r"^(?P<file>[^\n]+?)(?::(?P<line>\d+):(?P<col>\d+))?: (?P<message>\S.*)$")


def header(case: Path) -> dict[str, list[str]]:
    """The ``# key: value`` lines at the top of a case (or of its ``.expect`` sidecar)."""
    sidecar = case.with_suffix(".expect")
    raw = sidecar.read_bytes() if sidecar.exists() else case.read_bytes()
    text = raw.decode("utf-8", errors="replace").removeprefix("\ufeff")
    found: dict[str, list[str]] = {"expect": [], "path": [], "at": []}
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        key, sep, value = line[1:].strip().partition(":")
        if sep and key in found:
            found[key].append(value.strip())
    return found


def snapshot(directory: Path) -> dict[str, tuple[str, bytes | str]]:
    """Every entry under ``directory`` (and beside it): kind and bytes, or a symlink's target."""
    entries: dict[str, tuple[str, bytes | str]] = {}
    for root, dirs, files in os.walk(directory, followlinks=False):
        for name in dirs + files:
            path = Path(root) / name
            rel = str(path.relative_to(directory))
            if path.is_symlink():
                entries[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                entries[rel] = ("dir", "")
            else:
                entries[rel] = ("file", path.read_bytes())
    entries["<siblings>"] = ("dir", "\n".join(sorted(p.name for p in directory.parent.iterdir())))
    return entries


@pytest.fixture(scope="module")
def good_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real previous generation of the lab example."""
    out = tmp_path_factory.mktemp("good") / "out"
    code, _, stderr = run_cli("generate", str(example("lab")), "-o", str(out), "-q")
    assert code == 0, stderr
    return out


@pytest.fixture
def previous_output(tmp_path: Path, good_tree: Path) -> Path:
    out = tmp_path / "run" / "out"
    shutil.copytree(good_tree, out, symlinks=True)
    (out / "NOTES.md").write_text("the operator's own file\n")
    return out


def assert_refused(spec: Path, out: Path, *, expect: list[str], paths: list[str] = (), at: list[str] = ()) -> str:  # type: ignore[assignment]
    """Run ``fabgen generate``; check exit 2, problem lines only, nothing touched, fast. Returns stderr."""
    before = snapshot(out)
    started = time.perf_counter()
    code, stdout, stderr = run_cli("generate", str(spec), "-o", str(out))
    elapsed = time.perf_counter() - started
    assert code == 2, (code, stdout, stderr)
    assert stdout == ""
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    assert lines, "no message at all"
    for line in lines:
        match = PROBLEM_LINE.match(line)
        assert match is not None and match["file"] == str(spec), f"not a problem line: {line!r}"
    for needle in expect:
        assert any(needle in line for line in lines), f"{needle!r} not in:\n{stderr}"
    for path in paths:
        assert any(line.endswith(f" (at {path})") for line in lines), f"no problem at {path}:\n{stderr}"
    if at:
        first = PROBLEM_LINE.match(lines[0])
        assert first is not None and f"{first['line']}:{first['col']}" == at[0], lines[0]
    assert snapshot(out) == before, "the previous output changed"
    assert elapsed < TIME_LIMIT, f"took {elapsed:.2f} s"
    return stderr


def test_corpus_is_large_enough() -> None:
    assert len(CASES) >= 140
    for case in CASES:
        assert header(case)["expect"], f"{case.name} has no '# expect:' line"


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_bad_spec_is_refused(case: Path, previous_output: Path) -> None:
    meta = header(case)
    stderr = assert_refused(case, previous_output, expect=meta["expect"], paths=meta["path"], at=meta["at"])
    # validate says exactly the same thing
    code, _, again = run_cli("validate", str(case))
    assert code == 2 and again == stderr


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_bad_spec_into_fresh_directory_creates_nothing(case: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, _, _ = run_cli("generate", str(case), "-o", str(out))
    assert code == 2
    assert list(tmp_path.iterdir()) == [], "something was created"


def test_hundred_megabyte_spec(tmp_path: Path, previous_output: Path) -> None:
    """A 100 MB spec (valid YAML: the lab plus comment padding) is refused by size, without being read."""
    spec = tmp_path / "huge.yaml"
    pad = ("# " + "x" * 1021 + "\n").encode()
    with spec.open("wb") as handle:
        handle.write(example("lab").read_bytes())
        for _ in range(100 * 1024):
            handle.write(pad)
    assert spec.stat().st_size > 100 * 1024 * 1024 > MAX_BYTES
    assert_refused(spec, previous_output, expect=["larger than the", f"{MAX_BYTES}-byte limit"])


def test_unreadable_spec_paths(tmp_path: Path, previous_output: Path) -> None:
    assert_refused(tmp_path / "missing.yaml", previous_output, expect=["no such file"])
    assert_refused(tmp_path, previous_output, expect=["is a directory"])
