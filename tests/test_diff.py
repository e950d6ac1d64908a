"""``fabgen diff OLD NEW``: the devices a spec change touches, with line counts; exit like diff(1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabgen.pipeline import load_spec, plan_fabric
from fabgen.targets.render import render_files
from tests.helpers import example, run_cli

LAB = example("lab")


def _spec(tmp_path: Path, name: str, *edits: tuple[str, str]) -> Path:
    text = LAB.read_text()
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = tmp_path / name
    path.write_text(text)
    return path


def _json(*args: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    code, stdout, stderr = run_cli("diff", *args, "--format", "json")
    assert code in (0, 1), stderr
    return code, json.loads(stdout)


def test_same_spec_is_exit_0() -> None:
    assert run_cli("diff", str(LAB), str(LAB)) == (0, "no device's output changes\n", "")
    code, data = _json(str(LAB), str(LAB))
    assert code == 0 and data["changed"] is False and data["devices"] == []
    assert data["totals"] == {"devices": 0, "files": 0, "added": 0, "removed": 0}


def test_nccl_change_touches_hosts_only(tmp_path: Path) -> None:
    """lab01..lab03 install their profile's NCCL pair, lab04 (a NIC out of service) its own: both change."""
    new = _spec(tmp_path, "new.yaml", ("NCCL_IB_TIMEOUT: 20", "NCCL_IB_TIMEOUT: 22"))
    code, stdout, _ = run_cli("diff", str(LAB), str(new))
    assert code == 1
    lines = stdout.splitlines()
    headers = [line for line in lines if not line.startswith(" ")]
    assert [h.split()[:2] for h in headers[:-1]] == [["host", "lab04"], ["profile", "lab-node"]]
    assert "  hosts/lab04/nccl.conf" in stdout and "  hosts/_profiles/lab-node/nccl.conf" in stdout
    assert "+1 -1" in stdout
    assert headers[-1].startswith("2 device(s), ")

    code, data = _json(str(LAB), str(new))
    assert code == 1 and data["changed"] is True
    assert [d["kind"] for d in data["devices"]] == ["host", "profile"]
    lab04 = data["devices"][0]
    assert lab04["device"] == "lab04"
    conf = next(f for f in lab04["files"] if f["path"] == "hosts/lab04/nccl.conf")
    assert conf == {"path": "hosts/lab04/nccl.conf", "status": "changed", "added": 1, "removed": 1}
    assert lab04["added"] == sum(f["added"] for f in lab04["files"])
    assert data["totals"]["devices"] == 2 and data["totals"]["added"] == sum(d["added"] for d in data["devices"])


def test_qos_change_touches_switches(tmp_path: Path) -> None:
    new = _spec(tmp_path, "new.yaml", ("ecn: {min: 150KB, max: 1500KB", "ecn: {min: 200KB, max: 1500KB"))
    code, data = _json(str(LAB), str(new))
    assert code == 1
    switches = [d["device"] for d in data["devices"] if d["kind"] == "switch"]
    assert switches == ["leaf-r0-p00-01", "leaf-r1-p00-01", "leaf-r2-p00-01", "leaf-r3-p00-01",
                        "spine-01", "spine-02"]
    assert data["devices"][0]["kind"] == "switch"  # switches listed first, in natural order


def test_added_host_shows_added_files_cluster_and_leaves(tmp_path: Path) -> None:
    new = _spec(tmp_path, "new.yaml", ("count: 4\n", "count: 5\n"))
    code, data = _json(str(LAB), str(new))
    assert code == 1
    by_device = {(d["kind"], d["device"]): d for d in data["devices"]}
    lab05 = by_device[("host", "lab05")]
    assert lab05["removed"] == 0 and all(f["status"] == "added" for f in lab05["files"])
    assert ("cluster", None) in by_device  # cabling.csv
    assert any(kind == "switch" and name.startswith("leaf-") for kind, name in by_device)
    code, back = _json(str(new), str(LAB))  # and the other way round, removed
    assert all(f["status"] == "removed" for d in back["devices"] if d["device"] == "lab05" for f in d["files"])
    code, stdout, _ = run_cli("diff", str(LAB), str(new))
    assert "(added)" in stdout and "\ncluster " in stdout


def test_only_device_and_patch(tmp_path: Path) -> None:
    new = _spec(tmp_path, "new.yaml", ("NCCL_IB_TIMEOUT: 20", "NCCL_IB_TIMEOUT: 22"),
                ("ecn: {min: 150KB, max: 1500KB", "ecn: {min: 200KB, max: 1500KB"))
    code, data = _json(str(LAB), str(new), "--device", "lab04", "--device", "spine-*")
    assert code == 1 and [d["device"] for d in data["devices"]] == ["spine-01", "spine-02", "lab04"]
    _, owners = render_files(plan_fabric(load_spec(LAB)), None, ["lab04"])
    target = owners["hosts/lab04/nccl.conf"][0]  # the registry names the target; no name is hard-coded here
    code, data = _json(str(LAB), str(new), "--only", target)
    assert code == 1 and all(f["path"].endswith(("nccl.conf", "nccl.env")) for d in data["devices"] for f in d["files"])
    code, stdout, _ = run_cli("diff", str(LAB), str(new), "--only", target, "--device", "lab04", "--patch")
    assert code == 1
    assert "--- a/hosts/lab04/nccl.conf\n+++ b/hosts/lab04/nccl.conf\n" in stdout
    assert "\n-NCCL_IB_TIMEOUT=20\n+NCCL_IB_TIMEOUT=22\n" in stdout
    code, stdout, _ = run_cli("diff", str(LAB), str(new), "--only", "cabling")
    assert code == 0


def test_matches_what_generate_check_reports(tmp_path: Path) -> None:
    """The files diff names are exactly the files a drift check of the old tree against the new spec names."""
    new = _spec(tmp_path, "new.yaml", ("count: 4\n", "count: 5\n"), ("NCCL_IB_TIMEOUT: 20", "NCCL_IB_TIMEOUT: 21"))
    out = tmp_path / "out"
    assert run_cli("generate", str(LAB), "-o", str(out))[0] == 0
    code, stdout, _ = run_cli("generate", str(new), "-o", str(out), "--check")
    assert code == 1
    drift = {line.split(": ", 1)[1] for line in stdout.splitlines() if line.startswith(("added: ", "removed: "))}
    drift |= {line[6:] for line in stdout.splitlines() if line.startswith("--- a/")}
    _, data = _json(str(LAB), str(new))
    assert {f["path"] for d in data["devices"] for f in d["files"]} == drift


def test_bad_spec_is_exit_2_with_location(tmp_path: Path) -> None:
    bad = _spec(tmp_path, "bad.yaml", ("dscp: [26]", "dscp: [64]"))
    code, stdout, stderr = run_cli("diff", str(LAB), str(bad))
    assert code == 2 and stdout == ""
    assert stderr.startswith(f"{bad}:57:34: Input should be less than or equal to 63")


@pytest.mark.parametrize("args", [["--device", "leaf-typo*"], ["--only", "no-such-target"]])
def test_scope_typos_are_bad_input(args: list[str]) -> None:
    code, _, stderr = run_cli("diff", str(LAB), str(LAB), *args)
    assert code == 2 and ("matches no device" in stderr or "unknown target" in stderr)
