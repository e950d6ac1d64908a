"""The writer's refusal of foreign entries from what :meth:`TreeWriter.add` already learnt, against the full walk.

:func:`fabgen.writer._refuse_foreign_entries` skips its ``lstat`` per path and
parent for the new paths that ``add`` found to be regular files reached through
directories only (and seeds the directories ``add`` ``lstat``-ed). Here every
kind of entry an operator can leave in the way is planted in an old tree, and
the problems ``finish`` reports must be exactly the full walk's (the same
function without the hints), with and without ``--force``; the old tree stays
as it was whenever the run is refused.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fabgen.errors import OutputError
from fabgen.writer import MANIFEST, TreeWriter, _refuse_foreign_entries, write_tree

META = {"fabgen_version": "test"}
OLD = {"a/one.txt": "1\n", "a/two.txt": "2\n", "b/c/three.txt": "3\n", "top.txt": "t\n", "gone/x.txt": "x\n"}
NEW = {**{p: t for p, t in OLD.items() if not p.startswith("gone/")}, "a/two.txt": "2 changed\n",
       "a/new.txt": "n\n", "d/e/f.txt": "f\n", "g.txt": "g\n", "h/i.txt": "i\n", "k/l.txt": "l\n", "fifo.txt": "q\n"}


def _owners(files: dict[str, str]) -> dict[str, tuple[str, str]]:
    return {p: ("t", p.split("/")[0]) for p in files}


def _plant(out: Path, outside: Path) -> None:
    """One of each: a foreign file, a symlink to a file, a directory, a file and a symlink where a folder goes,
    a symlinked folder, a FIFO (a read of it would block the run), and a generated file turned into a symlink."""
    (out / "g.txt").write_text("the operator's\n")
    (out / "a" / "new.txt").symlink_to(outside / "file")
    (out / "d" / "e").mkdir(parents=True)
    (out / "d" / "e" / "f.txt").mkdir()
    (out / "h").write_text("a file where a folder goes\n")
    (out / "k").symlink_to(outside, target_is_directory=True)
    os.mkfifo(out / "fifo.txt")
    (out / "top.txt").unlink()
    (out / "top.txt").symlink_to(outside / "file")


def _snapshot(root: Path) -> dict[str, str]:
    found = {}
    for current, dirs, names in os.walk(root):
        for name in dirs + names:
            path = Path(current) / name
            found[str(path.relative_to(root))] = (
                f"-> {os.readlink(path)}" if path.is_symlink() else "dir" if path.is_dir() else
                path.read_text() if path.is_file() else "other")
    return found


@pytest.mark.parametrize("force", [False, True])
def test_known_entries_give_the_full_walks_problems(tmp_path: Path, force: bool) -> None:
    out, outside = tmp_path / "out", tmp_path / "outside"
    outside.mkdir()
    (outside / "file").write_text("outside\n")
    write_tree(OLD, out, _owners(OLD), META)
    _plant(out, outside)
    old_files = {p: ("t", e["device"]) for p, e in json.loads((out / MANIFEST).read_text())["files"].items()}
    with pytest.raises(OutputError) as walked:
        _refuse_foreign_entries(out, sorted(NEW), old_files, force)
    before = _snapshot(out)
    writer = TreeWriter(out, META, force=force)
    for path in sorted(NEW):
        writer.add(path, NEW[path].encode(), _owners(NEW)[path])
    assert writer._old_regular | writer.unchanged >= {"a/one.txt", "a/two.txt", "b/c/three.txt"}
    with pytest.raises(OutputError) as known:
        writer.finish()
    assert [str(p) for p in known.value.problems] == [str(p) for p in walked.value.problems]
    assert len(walked.value.problems) == (1 if force else 7)  # force replaces all but the directory
    assert _snapshot(out) == before and (outside / "file").read_text() == "outside\n"


def test_a_fifo_in_the_old_tree_is_not_read(tmp_path: Path) -> None:
    """A FIFO where a generated file was: ``--force`` replaces it without blocking on a read."""
    out = tmp_path / "out"
    write_tree({"p.txt": "1\n"}, out, {"p.txt": ("t", "")}, META)
    (out / "p.txt").unlink()
    os.mkfifo(out / "p.txt")
    write_tree({"p.txt": "1\n"}, out, {"p.txt": ("t", "")}, META, force=True)
    assert (out / "p.txt").read_text() == "1\n"


def test_remove_tree_removes_links_not_their_targets(tmp_path: Path) -> None:
    """``remove_tree`` (the swap's removal of the old tree) lists by ``scandir`` alone: a symlinked folder is
    unlinked, never entered; everything under the root goes, deep folders included."""
    from fabgen.writer import _listing, remove_tree

    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "keep.txt").write_text("keep\n")
    root = tmp_path / "old"
    for rel in ("a/b/c/d.txt", "a/e.txt", "f.txt", *(f"hosts/h{n:03d}/x.conf" for n in range(40))):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    (root / "a" / "b" / "to-dir").symlink_to(outside, target_is_directory=True)
    (root / "to-file").symlink_to(outside / "deep" / "keep.txt")
    directories, others = _listing(str(root))
    assert directories[0] == "" and set(directories) == {"", "a", "a/b", "a/b/c", "hosts",
                                                          *(f"hosts/h{n:03d}" for n in range(40))}
    assert {rel for rel, link in others if link} == {"a/b/to-dir", "to-file"}
    assert len(others) == 3 + 40 + 2
    remove_tree(root)
    assert not root.exists() and (outside / "deep" / "keep.txt").read_text() == "keep\n"
