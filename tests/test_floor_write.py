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


def test_the_write_row_is_the_median_turn_each_writer_against_its_own_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    """A lucky floor in one turn and a slow writer in another are never set against each other."""
    import bench.floor_write as floor_write

    turns = {"floor": [(0.0, 0.4), (0.0, 0.8), (0.0, 0.6)], "writer": [(0.1, 0.9), (0.1, 0.9), (0.1, 1.0)],
             "writer, no syscalls": [(0.12, 0.0), (0.14, 0.0), (0.13, 0.0)]}
    monkeypatch.setattr(floor_write, "rendered", lambda spec: [("a", b"x", ("t", ""))] * 10)
    monkeypatch.setattr(floor_write, "measure", lambda files, repeat: turns)
    ratio, python = floor_write.rows(Path("spec.yaml"), repeat=3)
    assert ratio.measured == "1.8x (1.10 s vs 0.60 s CPU, 10 files)"  # ratios 2.5, 1.25, 1.83: the median turn
    assert ratio.ok is True and "median of 3 turns" in ratio.name
    assert python.measured == "13000.0 us (0.13 s)"
