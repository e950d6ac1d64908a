"""Writing: atomic swap, incremental (mtimes kept), ownership, partial runs, drift check."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fabgen.errors import OutputError
from fabgen.writer import MANIFEST, check_tree, recover, safe_relpath, write_tree

META = {"fabgen_version": "test"}


def _write(files: dict[str, str], out: Path, **kw):  # type: ignore[no-untyped-def]
    owners = kw.pop("owners", None) or {p: ("t", p.split("/")[0]) for p in files}
    return write_tree(files, out, owners, META, **kw)


def test_first_write_and_manifest(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = _write({"a/x.txt": "x\n", "b.txt": "b\n"}, out)
    assert sorted(result.written) == ["a/x.txt", "b.txt"]
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["generator"] == "fabgen"
    assert set(manifest["files"]) == {"a/x.txt", "b.txt"}
    import hashlib

    assert manifest["files"]["b.txt"]["sha256"] == hashlib.sha256(b"b\n").hexdigest()
    assert oct((out).stat().st_mode & 0o777) != oct(0o700)
    assert not list(tmp_path.glob(".out.fabgen-*"))


def test_rerun_keeps_unchanged_mtimes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _write({"a.txt": "a\n", "b.txt": "b\n"}, out)
    os.utime(out / "a.txt", (1_000_000, 1_000_000))
    os.utime(out / "b.txt", (1_000_000, 1_000_000))
    result = _write({"a.txt": "a\n", "b.txt": "B\n"}, out)
    assert result.unchanged == ["a.txt"] and result.written == ["b.txt"]
    assert (out / "a.txt").stat().st_mtime == 1_000_000
    assert (out / "b.txt").stat().st_mtime != 1_000_000


def test_stale_generated_files_removed_user_files_kept(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _write({"a.txt": "a\n", "old.txt": "o\n"}, out)
    (out / "NOTES.md").write_text("mine\n")
    result = _write({"a.txt": "a\n"}, out)
    assert result.removed == ["old.txt"]
    assert not (out / "old.txt").exists()
    assert (out / "NOTES.md").read_text() == "mine\n"


def test_refuses_foreign_non_empty_directory(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "important.cfg").write_text("keep\n")
    with pytest.raises(OutputError, match=r"no fabgen manifest\.json"):
        _write({"a.txt": "a\n"}, out)
    assert (out / "important.cfg").read_text() == "keep\n" and not (out / "a.txt").exists()
    _write({"a.txt": "a\n"}, out, force=True)
    assert (out / "important.cfg").read_text() == "keep\n" and (out / "a.txt").exists()


def test_failure_midway_leaves_old_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    _write({"a.txt": "a\n", "b.txt": "b\n"}, out)
    import fabgen.writer as w

    def boom(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise OSError("disk full")

    monkeypatch.setattr(w, "_swap", boom)
    with pytest.raises(OSError):
        _write({"a.txt": "A\n", "c.txt": "c\n"}, out)
    assert (out / "a.txt").read_text() == "a\n" and not (out / "c.txt").exists()
    assert not list(tmp_path.glob(".out.fabgen-*"))


def test_recover_restores_half_swapped_tree(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _write({"a.txt": "a\n"}, out)
    os.rename(out, tmp_path / ".out.fabgen-old-x1")  # killed between the two renames
    (tmp_path / ".out.fabgen-tmp-y").mkdir()
    recover(out)
    assert (out / "a.txt").read_text() == "a\n"
    assert not list(tmp_path.glob(".out.fabgen-*"))


@pytest.mark.parametrize("bad", ["../x", "/etc/passwd", "a/../../x", "", "a//b/..", ".hidden/x", "a/\nb"])
def test_unsafe_paths_refused(bad: str) -> None:
    with pytest.raises(OutputError, match="unsafe output path"):
        safe_relpath(bad)


def test_symlink_in_output_is_not_followed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _write({"a/x.txt": "x\n"}, out)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.txt").write_text("secret\n")
    (out / "a" / "x.txt").unlink()
    (out / "a").rmdir()
    (out / "a").symlink_to(outside)
    _write({"a/x.txt": "new\n"}, out, force=True)
    assert (outside / "x.txt").read_text() == "secret\n"


def test_partial_scope_keeps_other_devices(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _write({"s1/c.cfg": "1\n", "s2/c.cfg": "2\n"}, out)
    result = _write({"s1/c.cfg": "1b\n"}, out, in_scope=lambda owner: owner[1] == "s1")
    assert result.removed == []
    assert (out / "s2/c.cfg").read_text() == "2\n" and (out / "s1/c.cfg").read_text() == "1b\n"
    manifest = json.loads((out / MANIFEST).read_text())
    assert set(manifest["files"]) == {"s1/c.cfg", "s2/c.cfg"}


def test_check_reports_changed_added_removed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _write({"a.txt": "one\n", "gone.txt": "g\n"}, out)
    drift = check_tree({"a.txt": "two\n", "new.txt": "n\n"}, out)
    assert drift.added == ["new.txt"] and drift.removed == ["gone.txt"]
    assert "-one\n+two\n" in drift.changed["a.txt"]
    assert not check_tree({"a.txt": "one\n", "gone.txt": "g\n"}, out)
