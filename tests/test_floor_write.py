"""``bench/floor_write.py`` measures the write stage against a floor that creates exactly the writer's tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.floor_write import floor, rendered, rows, write
from tests.helpers import example


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_floor_creates_the_writers_files_and_directories(tmp_path: Path) -> None:
    files = rendered(example("lab"))
    (tmp_path / "floor").mkdir()
    floor(str(tmp_path / "floor"), files)
    write(str(tmp_path / "writer"), files)
    by_writer = _tree(tmp_path / "writer")
    assert by_writer.pop("manifest.json")
    assert _tree(tmp_path / "floor") == by_writer == {path: data for path, data, _ in files}
    dirs = {str(p.relative_to(tmp_path / "floor")) for p in (tmp_path / "floor").rglob("*") if p.is_dir()}
    assert dirs == {str(p.relative_to(tmp_path / "writer")) for p in (tmp_path / "writer").rglob("*") if p.is_dir()}


def test_rows_are_rows_of_the_one_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABGEN_BENCH_TMP", str(tmp_path))
    found = rows(example("lab"), repeat=1)
    assert [r.target for r in found] == ["<= 2x", "-"]
    assert all(r.value is not None and r.value > 0 for r in found)
    assert list(tmp_path.iterdir()) == []  # every temporary tree removed
