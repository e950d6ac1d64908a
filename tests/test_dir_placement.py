"""How the writer makes its directories: ext4's top-of-hierarchy flag and the random first name of a top-level one."""

from __future__ import annotations

import array
import fcntl
import os
from pathlib import Path

import pytest

import fabgen.dir_placement as placement_module
from fabgen.dir_placement import SPREAD_EVERY, DirectoryPlacement, set_top_of_hierarchy
from fabgen.pipeline import generate, load_spec
from tests.helpers import example

_TOPDIR = 0x00020000


def _flags(path: Path) -> int:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        flags = array.array("i", [0])
        fcntl.ioctl(fd, 0x80086601, flags)  # FS_IOC_GETFLAGS
        return flags[0]
    finally:
        os.close(fd)


def _flag_works(tmp_path: Path) -> bool:
    probe = tmp_path / "probe"
    probe.mkdir()
    return set_top_of_hierarchy(str(probe)) and bool(_flags(probe) & _TOPDIR)


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, bool], list[tuple[str, bool]], list[str]]:
    """The flag as a fake file system keeps it, the calls that changed it, and the flag on ``hosts`` at each mkdir."""
    state: dict[str, bool] = {}
    calls: list[tuple[str, bool]] = []
    seen: list[str] = []
    real_mkdir = os.mkdir

    def fake_flag(path: str, on: bool = True) -> bool:
        calls.append((os.path.basename(path), on))
        state[os.path.basename(path)] = on
        return True

    def watched_mkdir(path: str, *mode: int) -> None:
        if os.path.basename(os.path.dirname(path)) == "hosts":
            seen.append("on" if state.get("hosts") else "off")
        real_mkdir(path, *mode)

    monkeypatch.setattr(placement_module, "set_top_of_hierarchy", fake_flag)
    monkeypatch.setattr(placement_module.os, "mkdir", watched_mkdir)
    return state, calls, seen


def test_one_host_directory_in_sixteen_is_made_under_the_flag(
        tmp_path: Path, recorded: tuple[dict[str, bool], list[tuple[str, bool]], list[str]]) -> None:
    """Host directories 0, 16, 32 go through Orlov's search; the rest follow them; the flag changes only when it must."""
    state, calls, seen = recorded
    placement = DirectoryPlacement(str(tmp_path))
    assert calls == [(tmp_path.name, True)]  # the root: its top-level directories are spread
    placement.mkdir("hosts")
    for n in range(2 * SPREAD_EVERY + 3):
        placement.mkdir(f"hosts/h{n:03d}")
    placement.mkdir("hosts/h000/nested")  # two levels down: not counted, no flag change
    assert [i for i, flag in enumerate(seen) if flag == "on"] == [0, SPREAD_EVERY, 2 * SPREAD_EVERY]
    assert calls[1:] == [("hosts", True), ("hosts", False)] * 3
    assert state["hosts"] is False and (tmp_path / "hosts" / "h000" / "nested").is_dir()


def test_no_flag_calls_where_the_file_system_has_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """tmpfs, XFS, macOS: the root's flag fails once, and no directory pays for another try."""
    calls: list[str] = []

    def no_flag(path: str, on: bool = True) -> bool:
        calls.append(path)
        return False

    monkeypatch.setattr(placement_module, "set_top_of_hierarchy", no_flag)
    placement = DirectoryPlacement(str(tmp_path))
    placement.mkdir("hosts")
    for n in range(20):
        placement.mkdir(f"hosts/h{n}")
    assert calls == [str(tmp_path)] and len(list((tmp_path / "hosts").iterdir())) == 20


def test_a_top_level_directory_is_renamed_from_a_random_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Made as ``switches.<random>.fabgen-mkdir``, then renamed: nothing of the first name is left."""
    made: list[str] = []
    real_mkdir = os.mkdir

    def recorded_mkdir(path: str, *mode: int) -> None:
        made.append(str(path))
        real_mkdir(path, *mode)

    monkeypatch.setattr(placement_module.os, "mkdir", recorded_mkdir)
    for run in ("a", "b"):
        (tmp_path / run).mkdir()
        placement = DirectoryPlacement(str(tmp_path / run))
        placement.mkdir("switches")
        placement.mkdir("netbox")
        assert sorted(p.name for p in (tmp_path / run).iterdir()) == ["netbox", "switches"]
    names = [os.path.basename(p).split(".") for p in made if p.endswith(".fabgen-mkdir")]
    assert [n[0] for n in names] == ["switches", "netbox"] * 2
    assert all(n[2] == "fabgen-mkdir" and len(n[1]) == 12 for n in names)
    assert len({n[1] for n in names}) == 4  # a new random part each time: ext4's search starts somewhere new


@pytest.mark.parametrize("in_the_way", ["file", "directory", "symlink"])
def test_a_top_level_name_already_taken_refuses_as_mkdir(tmp_path: Path, in_the_way: str) -> None:
    """FileExistsError as from ``os.mkdir`` (rename would silently replace an empty directory), and no leftover."""
    target = tmp_path / "switches"
    if in_the_way == "file":
        target.write_text("x")
    elif in_the_way == "directory":
        target.mkdir()
    else:
        target.symlink_to(tmp_path / "elsewhere")
    placement = DirectoryPlacement(str(tmp_path))
    with pytest.raises(FileExistsError):
        placement.mkdir("switches")
    assert [p.name for p in tmp_path.iterdir()] == ["switches"]


def test_generate_flags_the_root_only_and_leaves_no_first_names(tmp_path: Path) -> None:
    """On ext4, a generated tree: its root keeps the flag, a host directory has none, no ``.fabgen-mkdir`` is left."""
    if not _flag_works(tmp_path):
        pytest.skip("this file system has no top-directory flag (not ext2/3/4)")
    out = tmp_path / "out"
    generate(load_spec(example("lab")), out)
    assert _flags(out) & _TOPDIR
    host_dir = next(d for d in (out / "hosts").iterdir() if d.is_dir())
    assert not _flags(host_dir) & _TOPDIR
    assert not [p for p in out.rglob("*") if "fabgen-mkdir" in p.name]
