"""``fabgen generate`` end to end on the lab: drift check, --only/--device scoping, incremental writes.

Everything goes through the CLI (in process) against real output trees. Target
names are read from the manifest rather than written here, so the tests follow
the registry as targets are added.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import example, run_cli

LAB = example("lab")
OLD = 1_000_000_000  # a recognisable mtime (2001) stamped on every file before a rerun


def _files(out: Path) -> dict[str, Path]:
    return {p.relative_to(out).as_posix(): p for p in sorted(out.rglob("*")) if p.is_file()}


def _snapshot(out: Path) -> dict[str, tuple[str, int, int]]:
    """relpath -> (sha256, mtime_ns, inode): a file rewritten with the same bytes still shows."""
    return {rel: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns, p.stat().st_ino)
            for rel, p in _files(out).items()}


def _age(out: Path) -> None:
    for path in _files(out).values():
        os.utime(path, (OLD, OLD))


def _manifest(out: Path) -> dict[str, Any]:
    return json.loads((out / "manifest.json").read_text())


def _spec(tmp_path: Path, name: str, old: str, new: str) -> Path:
    """The lab spec with one text edit: comments and key order kept, so only the edit differs."""
    text = LAB.read_text()
    assert text.count(old) == 1, old
    path = tmp_path / name
    path.write_text(text.replace(old, new))
    return path


def _timeout(tmp_path: Path, value: int) -> Path:
    return _spec(tmp_path, "timeout.yaml", "NCCL_IB_TIMEOUT: 20", f"NCCL_IB_TIMEOUT: {value}")


def _hosts(tmp_path: Path, count: int) -> Path:
    return _spec(tmp_path, "hosts.yaml", "count: 4\n", f"count: {count}\n")


def _generate(spec: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli("generate", str(spec), "-o", str(out), *extra)


@pytest.fixture
def lab_out(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    code, _stdout, stderr = _generate(LAB, out)
    assert code == 0, stderr
    return out


def _owner(out: Path, rel: str) -> tuple[str, str]:
    entry = _manifest(out)["files"][rel]
    return entry["target"], entry["device"]


def _switch_file(out: Path, name: str) -> str:
    found = [rel for rel, e in _manifest(out)["files"].items() if e["device"] == name]
    assert found, f"no file of switch {name} in the manifest"
    return sorted(found)[0]


def _corrupt(out: Path, rel: str) -> None:
    path = out / rel
    path.write_text(path.read_text() + "# edited by hand\n")


# --- drift check ---------------------------------------------------------------------------------


def test_check_identical_is_exit_0_and_touches_nothing(lab_out: Path) -> None:
    before = _snapshot(lab_out)
    code, stdout, stderr = _generate(LAB, lab_out, "--check")
    assert (code, stderr) == (0, "") and stdout == f"{lab_out}: up to date\n"
    assert _snapshot(lab_out) == before


def test_check_reports_changed_added_removed_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    five = _hosts(tmp_path, 5)
    assert _generate(five, out)[0] == 0
    assert (out / "hosts/lab05/install.json").is_file()
    (out / "hosts/lab04/nccl.env").unlink()  # on disk no more: the lab renders it, so it is "added"
    _corrupt(out, "hosts/_profiles/lab-node/nccl.conf")
    before = _snapshot(out)

    code, stdout, stderr = _generate(LAB, out, "--check")
    assert code == 1
    lines = stdout.splitlines()
    assert "added: hosts/lab04/nccl.env" in lines
    lab05 = sorted(rel for rel in _manifest(out)["files"] if rel.startswith("hosts/lab05/"))
    assert lab05 and all(f"removed: {rel}" in lines for rel in lab05)
    # One unified diff per changed file: the hand edit, and every file whose content depends on the host count.
    assert "--- a/hosts/_profiles/lab-node/nccl.conf" in lines and "+++ b/hosts/_profiles/lab-node/nccl.conf" in lines
    assert "-# edited by hand" in lines
    assert "--- a/cabling.csv" in lines  # lab05's four cables are gone
    assert not any(line.startswith("--- a/hosts/lab03/") for line in lines)  # untouched files: no diff
    changed = sum(line.startswith("--- a/") for line in lines)
    total = 1 + len(lab05) + changed
    assert stderr == f"fabgen: {total} file(s) differ from {out}\n"
    assert _snapshot(out) == before
    assert not list(tmp_path.glob(".out.fabgen-*"))


def test_check_into_missing_directory_lists_every_file_as_added(tmp_path: Path) -> None:
    out = tmp_path / "never-generated"
    code, stdout, _ = _generate(LAB, out, "--check")
    assert code == 1 and "added: cabling.csv" in stdout.splitlines()
    assert not out.exists()


def test_check_only_compares_the_chosen_target(lab_out: Path) -> None:
    host_target, _ = _owner(lab_out, "hosts/lab04/nccl.conf")
    switch_rel = _switch_file(lab_out, "leaf-r0-p00-01")
    switch_target, _ = _owner(lab_out, switch_rel)
    _corrupt(lab_out, "hosts/lab04/nccl.conf")
    _corrupt(lab_out, switch_rel)
    before = _snapshot(lab_out)

    code, stdout, _ = _generate(LAB, lab_out, "--check", "--only", host_target)
    assert code == 1 and "--- a/hosts/lab04/nccl.conf" in stdout and switch_rel not in stdout
    code, stdout, _ = _generate(LAB, lab_out, "--check", "--only", switch_target)
    assert code == 1 and f"--- a/{switch_rel}" in stdout and "nccl.conf" not in stdout
    code, stdout, _ = _generate(LAB, lab_out, "--check", "--only", "cabling")
    assert code == 0 and "up to date" in stdout
    assert _snapshot(lab_out) == before


def test_check_device_globs_compare_only_matching_devices(lab_out: Path) -> None:
    leaf = _switch_file(lab_out, "leaf-r0-p00-01")
    spine = _switch_file(lab_out, "spine-01")
    for rel in (leaf, spine, "hosts/lab04/nccl.conf", "cabling.csv"):
        _corrupt(lab_out, rel)

    code, stdout, _ = _generate(LAB, lab_out, "--check", "--device", "leaf-*")
    diffs = [line[6:] for line in stdout.splitlines() if line.startswith("--- a/")]
    assert code == 1 and diffs == [leaf]

    code, stdout, _ = _generate(LAB, lab_out, "--check", "--device", "spine-0[1]", "--device", "lab04")
    diffs = [line[6:] for line in stdout.splitlines() if line.startswith("--- a/")]
    assert code == 1 and sorted(diffs) == sorted(["hosts/lab04/nccl.conf", spine])

    code, stdout, _ = _generate(LAB, lab_out, "--check", "--device", "lab0[123]", "--device", "spine-02")
    assert code == 0, stdout  # cluster-wide cabling.csv is outside any device scope

    code, stdout, _ = _generate(LAB, lab_out, "--check", "--only", "cabling")
    assert code == 1 and "--- a/cabling.csv" in stdout


def test_check_device_scope_reports_removed_files_of_that_device_only(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert _generate(_hosts(tmp_path, 5), out)[0] == 0
    code, stdout, _ = _generate(LAB, out, "--check", "--device", "lab05")
    removed = [line for line in stdout.splitlines() if line.startswith("removed: ")]
    assert code == 1 and removed and all(line.startswith("removed: hosts/lab05/") for line in removed)
    assert "--- a/" not in stdout  # leaves changed too, but they are not in scope
    code, stdout, _ = _generate(LAB, out, "--check", "--device", "lab01")
    assert code == 0, stdout


def test_unknown_target_is_bad_input(lab_out: Path) -> None:
    code, _, stderr = _generate(LAB, lab_out, "--check", "--only", "no-such-target")
    assert code == 2 and "unknown target 'no-such-target'" in stderr


def test_device_pattern_matching_nothing_is_bad_input(lab_out: Path) -> None:
    """A typo in --device must not pass a CI drift check by comparing nothing."""
    before = _snapshot(lab_out)
    for extra in (("--check",), ()):
        code, stdout, stderr = _generate(LAB, lab_out, *extra, "--device", "leaf-typo-*")
        assert code == 2 and "'leaf-typo-*' matches no device" in stderr, (stdout, stderr)
    assert _snapshot(lab_out) == before


# --- scoped writes ---------------------------------------------------------------------------------


def test_device_scoped_generate_leaves_other_devices_alone(tmp_path: Path, lab_out: Path) -> None:
    _age(lab_out)
    before = _snapshot(lab_out)
    manifest_before = _manifest(lab_out)["files"]
    new = _timeout(tmp_path, 22)

    code, stdout, _ = _generate(new, lab_out, "--device", "lab04")  # lab04 has its own NCCL files
    assert code == 0
    after = _snapshot(lab_out)
    touched = {rel for rel in after if rel != "manifest.json" and after[rel] != before[rel]}
    assert touched and all(rel.startswith("hosts/lab04/") for rel in touched)
    assert "NCCL_IB_TIMEOUT=22" in (lab_out / "hosts/lab04/nccl.conf").read_text()
    assert "NCCL_IB_TIMEOUT=20" in (lab_out / "hosts/_profiles/lab-node/nccl.conf").read_text()
    assert stdout == f"{lab_out}: {len(touched)} written, {sum(1 for r in before if r.startswith('hosts/lab04/')) - len(touched)} unchanged, 0 removed\n"

    manifest = _manifest(lab_out)["files"]
    assert set(manifest) == set(manifest_before)
    for rel, entry in manifest.items():
        assert entry["sha256"] == hashlib.sha256((lab_out / rel).read_bytes()).hexdigest(), rel
        if rel not in touched:
            assert entry == manifest_before[rel], rel
        assert (entry["target"], entry["device"]) == (manifest_before[rel]["target"], manifest_before[rel]["device"])

    # The rest of the tree is exactly what the old spec made: a full check with the new spec names the others.
    code, stdout, _ = _generate(new, lab_out, "--check")
    diffs = {line[6:] for line in stdout.splitlines() if line.startswith("--- a/")}
    assert code == 1 and diffs and not any(d.startswith("hosts/lab04/") for d in diffs)
    assert {"hosts/_profiles/lab-node/nccl.conf", "hosts/_profiles/lab-node/nccl.env"} <= diffs
    assert _generate(new, lab_out, "--check", "--device", "lab04")[0] == 0


def test_only_scoped_generate_removes_stale_files_of_that_target_only(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert _generate(_hosts(tmp_path, 5), out)[0] == 0
    host_target, _ = _owner(out, "hosts/lab05/netplan.yaml")
    lab05 = {rel: _owner(out, rel) for rel in _manifest(out)["files"] if rel.startswith("hosts/lab05/")}
    others = {rel for rel, (target, _) in lab05.items() if target != host_target}
    assert others, "lab05 should have files of more than one target"

    code, stdout, _ = _generate(LAB, out, "--only", host_target)
    assert code == 0
    gone = {rel for rel, (target, _) in lab05.items() if target == host_target}
    assert stdout.endswith(f", {len(gone)} removed\n")
    manifest = _manifest(out)["files"]
    for rel in gone:
        assert not (out / rel).exists() and rel not in manifest
    for rel in others:  # another target's files of the vanished host stay until a run in their scope
        assert (out / rel).is_file() and (manifest[rel]["target"], manifest[rel]["device"]) == lab05[rel]

    code, stdout, _ = _generate(LAB, out, "--device", "lab05")  # a device known only to the manifest
    assert code == 0 and stdout.endswith(f", {len(others)} removed\n")
    assert not (out / "hosts/lab05").exists() and not any(r.startswith("hosts/lab05/") for r in _manifest(out)["files"])


def test_user_files_survive_scoped_and_full_runs(lab_out: Path) -> None:
    (lab_out / "NOTES.md").write_text("mine\n")
    (lab_out / "hosts" / "lab01" / "local.conf").write_text("mine too\n")
    assert _generate(LAB, lab_out, "--device", "lab01")[0] == 0
    assert _generate(LAB, lab_out)[0] == 0
    assert (lab_out / "NOTES.md").read_text() == "mine\n"
    assert (lab_out / "hosts" / "lab01" / "local.conf").read_text() == "mine too\n"
    assert "NOTES.md" not in _manifest(lab_out)["files"]
    assert _generate(LAB, lab_out, "--check")[0] == 0  # files fabgen does not own are not drift


# --- incremental generation ------------------------------------------------------------------------


def test_rerun_of_unchanged_spec_writes_nothing(lab_out: Path) -> None:
    _age(lab_out)
    before = _snapshot(lab_out)
    code, stdout, _ = _generate(LAB, lab_out)
    assert code == 0 and stdout == f"{lab_out}: 0 written, {len(before) - 1} unchanged, 0 removed\n"
    assert _snapshot(lab_out) == before  # same bytes, same mtimes, same inodes; manifest.json included


def test_rerun_rewrites_only_changed_files(tmp_path: Path, lab_out: Path) -> None:
    _age(lab_out)
    before = _snapshot(lab_out)
    code, stdout, _ = _generate(_timeout(tmp_path, 22), lab_out)
    assert code == 0
    after = _snapshot(lab_out)
    assert set(after) == set(before)
    changed = {rel for rel in after if after[rel][0] != before[rel][0]}
    rewritten = {rel for rel in after if after[rel][1:] != before[rel][1:]}
    assert changed == rewritten  # a file is written exactly when its content changes
    assert "hosts/_profiles/lab-node/nccl.conf" in changed and "cabling.csv" not in changed
    assert any(rel.startswith("switches/") for rel in after) and not any(r.startswith("switches/") for r in changed)
    assert (lab_out / "cabling.csv").stat().st_mtime == OLD
    content = changed - {"manifest.json"}
    assert stdout == f"{lab_out}: {len(content)} written, {len(before) - 1 - len(content)} unchanged, 0 removed\n"
