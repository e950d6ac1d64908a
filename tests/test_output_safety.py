"""fabgen owns only what its manifest lists, never reaches outside its output, and survives SIGKILL.

* A non-empty directory without a (valid) fabgen manifest is refused unless
  ``--force``; with ``--force`` the operator's files are kept.
* A file, symlink or directory fabgen did not create is never deleted or
  replaced silently: where it is in the way of a generated file, the run is
  refused naming it (``--force`` replaces files and symlinks, never a
  directory, and never what a symlink points to).
* Symlinks are never followed: not the output directory itself, not a
  symlinked subdirectory, not a symlinked file; a manifest listing
  ``../../etc/passwd`` makes fabgen neither read nor delete it (the victims
  here are FIFOs: opening one would hang the run, so "not read" is proven).
* Temporary directories left by a killed run are cleaned (or the old tree
  restored) by the next run; an output named ``*`` does not touch its
  siblings' leftovers.
* A real ``fabgen generate`` subprocess killed with SIGKILL at random points
  while writing leaves the old tree byte for byte, or the complete new tree,
  never a mix, and the next run succeeds.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from fabgen.writer import MANIFEST, recover
from tests.helpers import ROOT, edited, example, run_cli

LAB = example("lab")


def snapshot(directory: Path) -> dict[str, Any]:
    """Kind and content of every entry under ``directory``, symlinks not followed (targets as text)."""
    entries: dict[str, Any] = {}
    for root, dirs, files in os.walk(directory, followlinks=False):
        for name in dirs + files:
            path = Path(root) / name
            rel = str(path.relative_to(directory))
            if path.is_symlink():
                entries[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                entries[rel] = ("dir",)
            else:
                entries[rel] = ("file", path.read_bytes())
    return entries


def generate(spec: Path, out: Path, *extra: str) -> tuple[int, str]:
    code, _, stderr = run_cli("generate", str(spec), "-o", str(out), "-q", *extra)
    assert "Traceback" not in stderr
    return code, stderr


def write_spec(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def smaller_lab(tmp_path: Path) -> Path:
    """The lab with three hosts: regenerating the full lab over it adds hosts/lab04/*."""
    def edit(data: dict[str, Any]) -> None:
        data["hosts"][0]["count"] = 3
        data["hosts"][0]["overrides"] = {}
    return write_spec(tmp_path, "lab3.yaml", edited(edit))


def siblings(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.fabgen-"))


# --------------------------------------------------------------------------- ownership

def test_refuses_non_empty_directory_without_manifest(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "running-config.cfg").write_text("the operator's\n")
    before = snapshot(out)
    code, stderr = generate(LAB, out)
    assert code == 2 and "no fabgen manifest.json" in stderr and "--force" in stderr
    assert snapshot(out) == before
    code, _ = generate(LAB, out, "--force")
    assert code == 0
    assert (out / "running-config.cfg").read_text() == "the operator's\n"
    assert "running-config.cfg" not in json.loads((out / MANIFEST).read_text())["files"]
    # and from now on it is a fabgen directory: the operator's file stays, run after run
    assert generate(LAB, out)[0] == 0 and (out / "running-config.cfg").read_text() == "the operator's\n"


@pytest.mark.parametrize("manifest", [
    {"generator": "fabgen", "files": {"cabling.csv": 5}},
    {"generator": "fabgen", "files": {"cabling.csv": {"target": ["x"]}}},
    {"generator": "fabgen", "files": []},
    "not json at all",
])
def test_corrupt_manifest_disowns_the_directory(tmp_path: Path, manifest: object) -> None:
    out = tmp_path / "out"
    assert generate(LAB, out)[0] == 0
    text = manifest if isinstance(manifest, str) else json.dumps(manifest)
    (out / MANIFEST).write_text(text)
    before = snapshot(out)
    code, stderr = generate(LAB, out)
    assert code == 2 and "no fabgen manifest.json (or an invalid one)" in stderr, stderr
    assert snapshot(out) == before


def test_operator_files_survive_regeneration(tmp_path: Path, smaller_lab: Path) -> None:
    out = tmp_path / "out"
    assert generate(LAB, out)[0] == 0
    mine = {"NOTES.md": b"notes\n", "hosts/lab01/local.conf": b"local\n", "extra/deep/x.bin": b"\x00\x01"}
    for rel, data in mine.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)
    assert generate(smaller_lab, out)[0] == 0  # lab04 goes away: its generated files are removed
    assert not (out / "hosts" / "lab04").exists()
    for rel, data in mine.items():
        assert (out / rel).read_bytes() == data
    assert generate(LAB, out)[0] == 0
    for rel, data in mine.items():
        assert (out / rel).read_bytes() == data


@pytest.mark.parametrize("intruder", ["file", "symlink", "directory", "file-where-a-folder-goes",
                                      "symlink-where-a-folder-goes"])
def test_operator_entry_in_the_way_is_never_replaced_silently(tmp_path: Path, smaller_lab: Path,
                                                              intruder: str) -> None:
    out = tmp_path / "out"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "nccl.conf").write_text("outside\n")
    assert generate(smaller_lab, out)[0] == 0
    host = out / "hosts" / "lab04"  # the full lab writes hosts/lab04/nccl.conf here
    if intruder == "file":
        host.mkdir()
        (host / "nccl.conf").write_text("the operator's\n")
    elif intruder == "symlink":
        host.mkdir()
        (host / "nccl.conf").symlink_to(outside / "nccl.conf")
    elif intruder == "directory":
        (host / "nccl.conf").mkdir(parents=True)
        (host / "nccl.conf" / "keep").write_text("the operator's\n")
    elif intruder == "file-where-a-folder-goes":
        host.write_text("the operator's\n")
    else:
        host.symlink_to(outside, target_is_directory=True)
    before, before_outside = snapshot(out), snapshot(outside)
    code, stderr = generate(LAB, out)
    assert code == 2, stderr
    assert "hosts/lab04" in stderr and "move it away" in stderr
    assert snapshot(out) == before and snapshot(outside) == before_outside
    code, stderr = generate(LAB, out, "--force")
    assert snapshot(outside) == before_outside  # never through a symlink, whatever --force says
    if intruder == "directory":
        assert code == 2 and snapshot(out) == before  # a directory is never removed
    else:
        assert code == 0, stderr
        assert (host / "nccl.conf").is_file() and not (host / "nccl.conf").is_symlink()
        assert not host.is_symlink()


def test_output_directory_that_is_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "keep.txt").write_text("keep\n")
    out = tmp_path / "out"
    out.symlink_to(real, target_is_directory=True)
    for extra in ((), ("--force",)):
        code, stderr = generate(LAB, out, *extra)
        assert code == 2 and "symlink" in stderr
        assert snapshot(real) == {"keep.txt": ("file", b"keep\n")} and out.is_symlink()


def test_symlinked_subdirectory_is_never_followed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert generate(LAB, out)[0] == 0
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(out / "switches", elsewhere)
    shutil.rmtree(out / "switches")
    (out / "switches").symlink_to(elsewhere, target_is_directory=True)
    before = snapshot(elsewhere)
    assert generate(LAB, out)[0] == 2
    assert generate(LAB, out, "--check")[0] in (0, 1)
    assert generate(LAB, out, "--force")[0] == 0
    assert snapshot(elsewhere) == before
    assert (out / "switches").is_dir() and not (out / "switches").is_symlink()


def test_stale_symlink_is_removed_not_its_target(tmp_path: Path, smaller_lab: Path) -> None:
    """A generated file the operator turned into a symlink, and that the new spec drops: only the link goes."""
    out = tmp_path / "out"
    victim = tmp_path / "victim.conf"
    victim.write_text("precious\n")
    assert generate(LAB, out)[0] == 0
    (out / "hosts" / "lab04" / "nccl.conf").unlink()
    (out / "hosts" / "lab04" / "nccl.conf").symlink_to(victim)
    assert generate(smaller_lab, out)[0] == 0
    assert victim.read_text() == "precious\n"


@pytest.mark.parametrize("forged", ["../victim", "../../victim", "/VICTIM", "hosts/../../victim", "./x/../../victim"])
def test_forged_manifest_paths_are_neither_read_nor_deleted(tmp_path: Path, forged: str) -> None:
    """The victims are FIFOs: a read would block the run (killed by the timeout), a delete would remove them."""
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    out = work / "out"
    assert generate(LAB, out)[0] == 0
    victims = [work / "victim", tmp_path / "a" / "victim", tmp_path / "VICTIM"]
    for victim in victims:
        os.mkfifo(victim)
    path = forged.replace("/VICTIM", str(tmp_path / "VICTIM"))
    manifest = json.loads((out / MANIFEST).read_text())
    manifest["files"][path] = {"sha256": "0" * 64, "bytes": 1, "target": "eos", "device": "spine-01"}
    (out / MANIFEST).write_text(json.dumps(manifest))
    for argv in ([], ["--check"], ["--only", "eos"], ["--force"]):
        run = subprocess.run([sys.executable, "-m", "fabgen.cli", "generate", str(LAB), "-o", str(out), "-q", *argv],
                             cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert "Traceback" not in run.stderr
        assert run.returncode in (0, 1, 2), run.stderr
        assert all(v.exists() for v in victims), argv
    assert path not in json.loads((out / MANIFEST).read_text())["files"]


# --------------------------------------------------------------------------- leftovers of a killed run

def test_leftover_temporaries_are_cleaned(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert generate(LAB, out)[0] == 0
    for leftover in (".out.fabgen-tmp-k1ll3d", ".out.fabgen-old-k1ll3d"):
        (tmp_path / leftover / "hosts").mkdir(parents=True)
        (tmp_path / leftover / "hosts" / "half.conf").write_text("half\n")
    assert generate(LAB, out)[0] == 0
    assert siblings(out) == []


def test_half_swapped_tree_is_restored(tmp_path: Path) -> None:
    """Killed between the two renames of the swap: the output is missing, the old tree waits beside it."""
    out = tmp_path / "out"
    assert generate(LAB, out)[0] == 0
    before = snapshot(out)
    os.rename(out, tmp_path / ".out.fabgen-old-abc123")
    (tmp_path / ".out.fabgen-tmp-def456").mkdir()
    code, _, _ = run_cli("generate", str(LAB), "-o", str(out), "--check")
    recover(out)
    assert snapshot(out) == before and siblings(out) == []
    assert code in (0, 1)
    assert generate(LAB, out)[0] == 0 and snapshot(out) == before


def test_output_named_like_a_glob_leaves_siblings_alone(tmp_path: Path) -> None:
    parent = tmp_path / "outputs"
    parent.mkdir()
    other_old = parent / ".other.fabgen-old-x1"  # another output's tree, waiting to be restored
    other_old.mkdir()
    (other_old / "cabling.csv").write_text("theirs\n")
    other_tmp = parent / ".other.fabgen-tmp-x2"
    other_tmp.mkdir()
    for name in ("*", "o*", "[o]ther", "?ther"):
        assert generate(LAB, parent / name)[0] == 0, name
        assert generate(LAB, parent / name)[0] == 0, name
    assert (other_old / "cabling.csv").read_text() == "theirs\n" and other_tmp.is_dir()


def test_unwritable_output_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x\n")
    run = subprocess.run([sys.executable, "-m", "fabgen.cli", "generate", str(LAB), "-o", str(blocker / "out")],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert str(blocker) in run.stderr


# --------------------------------------------------------------------------- SIGKILL while writing

HOSTS_OLD, HOSTS_NEW = 256, 240


def _big_lab(hosts: int, timeout: int) -> str:
    """The lab grown to ``hosts`` hosts (about three files each), big enough that writing takes a while."""
    def edit(data: dict[str, Any]) -> None:
        group = data["hosts"][0]
        group["count"] = hosts
        group["name"] = "lab{index:04d}"
        group["overrides"] = {"lab0004": group["overrides"]["lab04"]}
        data["fabric"]["tiers"]["leaf"]["ports"] = 64
        data["fabric"]["tiers"]["spine"] = {"os": "eos", "model": "7800R3", "ports": 576, "speed": "400G"}
        data["fabric"]["addressing"] = {"p2p": "10.0.0.0/14", "loopbacks": "10.255.0.0/16", "mgmt": "172.16.0.0/16"}
        data["nccl"]["env"]["NCCL_IB_TIMEOUT"] = timeout
    return edited(edit)


def _spawn(spec: Path, out: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "fabgen.cli", "generate", str(spec), "-o", str(out), "-q"],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _wait_for_writing(process: subprocess.Popen[bytes], out: Path) -> bool:
    """Block until the run has created its temporary tree (True) or ended (False)."""
    pattern = f".{out.name}.fabgen-tmp-*"
    while process.poll() is None:
        if any(out.parent.glob(pattern)):
            return True
        time.sleep(0.0005)
    return False


def test_sigkill_while_writing_leaves_old_or_new_tree(tmp_path: Path) -> None:
    old_spec = write_spec(tmp_path, "old.yaml", _big_lab(HOSTS_OLD, 20))
    new_spec = write_spec(tmp_path, "new.yaml", _big_lab(HOSTS_NEW, 21))
    reference = tmp_path / "reference"
    assert generate(old_spec, reference / "old")[0] == 0
    assert generate(new_spec, reference / "new")[0] == 0
    old_tree, new_tree = snapshot(reference / "old"), snapshot(reference / "new")
    assert len(old_tree) > 700 and old_tree != new_tree

    # calibrate: how long the writing phase of a real run takes on this machine
    out = tmp_path / "calibrate" / "out"
    shutil.copytree(reference / "old", out, symlinks=True)
    process = _spawn(new_spec, out)
    assert _wait_for_writing(process, out)
    started = time.perf_counter()
    assert process.wait(timeout=120) == 0
    writing = max(time.perf_counter() - started, 0.01)

    rng = random.Random(20240611)
    outcomes: list[tuple[str, bool]] = []
    for run in range(8):
        out = tmp_path / f"run{run}" / "out"
        shutil.copytree(reference / "old", out, symlinks=True)
        process = _spawn(new_spec, out)
        writing_now = _wait_for_writing(process, out)
        time.sleep(rng.uniform(0, writing * 1.1))
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        killed = writing_now and process.returncode == -signal.SIGKILL
        assert killed or process.returncode == 0, process.stderr.read() if process.stderr else b""
        if out.exists():
            state = snapshot(out)
            assert state in (old_tree, new_tree), f"run {run}: a mix of old and new trees"
            outcomes.append(("old" if state == old_tree else "new", killed))
        else:  # between the two renames of the swap: the old tree waits beside it, whole
            olds = list(out.parent.glob(".out.fabgen-old-*"))
            assert len(olds) == 1 and snapshot(olds[0]) == old_tree, f"run {run}: output gone"
            outcomes.append(("swapping", killed))
        code, stderr = generate(new_spec, out)  # the next run recovers and succeeds
        assert code == 0, stderr
        assert snapshot(out) == new_tree and siblings(out) == []
    assert ("old", True) in outcomes, f"no kill landed mid-write: {outcomes}"
