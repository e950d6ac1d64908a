"""``lint --deployed``, FG507: each host's collected ``roce-nic.conf`` against fabgen's render, read as
``roce-nic.sh`` reads it."""

from __future__ import annotations

from pathlib import Path

import pytest
from lint_support import EXAMPLES, write_deployed
from test_lint_deployed import edit

from fabgen.lint import lint
from fabgen.lint.deployed import read_deployed
from fabgen.pipeline import load_spec, plan_fabric
from fabgen.targets.mlx5.parse import parse_nic_plan
from fabgen.targets.render import render_files


def site(base: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    fabric = plan_fabric(load_spec(EXAMPLES / base / "spec.yaml"))
    write_deployed(fabric, tmp_path / "collected")
    return fabric.spec, fabric, tmp_path / "collected"


def fg507(spec, fabric, root: Path) -> list[tuple[str, int, str]]:  # type: ignore[no-untyped-def]
    findings = lint(spec, fabric, deployed=root, config={"select": ["FG507", "FG503"]})
    return [(f"{f.code} {Path(f.file).relative_to(root)}", f.line, f.message) for f in findings]


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.mark.parametrize("base", ["lab", "sonic-pod", "cumulus-pod"])
def test_a_generated_tree_has_no_nic_plan_drift(base: str, tmp_path: Path) -> None:
    spec, fabric, root = site(base, tmp_path)
    assert fg507(spec, fabric, root) == []
    assert read_deployed(root, fabric).nic_plans == (), "fabgen's own text is not even parsed"


def test_every_rendered_plan_reads_back_as_the_script_reads_it() -> None:
    fabric = plan_fabric(load_spec(EXAMPLES / "lab" / "spec.yaml"))
    files, _ = render_files(fabric, ["nic-qos"])
    for host in fabric.hosts:
        plan = parse_nic_plan(files[f"hosts/{host.name}/roce-nic.conf"])
        assert plan.format == "1" and plan.settings["HOST"] == (host.name,)
        assert list(plan.nics) == [nic.name for nic in host.nics if nic.in_service]


def test_reordered_commented_and_respaced_plans_are_not_drift(tmp_path: Path) -> None:
    spec, fabric, root = site("lab", tmp_path)
    path = root / "hosts" / "lab01" / "roce-nic.conf"
    lines = path.read_text().splitlines()
    head, body = lines[:3], lines[3:]  # comments and FORMAT= first, as the script requires
    body = [line.replace(" ", "  ") if line.startswith("PFC_EN=") else line for line in reversed(body)]
    cc = next(i for i, line in enumerate(body) if line.startswith("CC="))
    words = body[cc][3:].split()
    body[cc] = "CC=" + " ".join(reversed(words)).replace("rp_ai_rate:5", "rp_ai_rate:05")
    path.write_text("\n".join([*head, "# collected by the site's tool", "", *body]) + "\n")
    assert fg507(spec, fabric, root) == []
    assert len(read_deployed(root, fabric).nic_plans) == 1, "parsed, because its text differs"


def test_planted_nic_plan_edits_are_found_at_their_lines(tmp_path: Path) -> None:
    spec, fabric, root = site("lab", tmp_path)
    lab01 = root / "hosts" / "lab01" / "roce-nic.conf"
    edit(lab01, "PFC_EN=0 0 0 1 0 0 0 0", "PFC_EN=0 0 0 0 1 0 0 0")
    edit(lab01, "TRUST=dscp", "TRUST=pcp")
    edit(lab01, "rp_ai_rate:5 ", "rp_ai_rate:50 ")
    edit(lab01, "NIC=mlx5_1 ens2np0 0000:3a:00.0 1 1 4200", "NIC=mlx5_1 ens2np0 0000:3a:00.0 1 1 9000")
    lab02 = root / "hosts" / "lab02" / "roce-nic.conf"
    text = lab02.read_text()
    dscp = next(line for line in text.splitlines() if line.startswith("DSCP_PRIO="))
    words = dscp.split("=")[1].split()
    assert words[26] == "3"
    words[26] = "0"
    edit(lab02, dscp, "DSCP_PRIO=" + " ".join(words))
    edit(lab02, "NIC=mlx5_3 ", "NIC=mlx9_secret ")
    edit(lab02, "CMA_ROCE_TOS=106", "CMA_ROCE_TOS=s3cr3t")
    found = fg507(spec, fabric, root)
    messages = " | ".join(m for _, _, m in found)
    assert "mlx9_secret" not in messages and "s3cr3t" not in messages
    assert sorted(found) == sorted([
        ("FG507 hosts/lab01/roce-nic.conf", line_of(lab01, "TRUST="),
         "lab01: roce-nic.conf TRUST is pcp (plan dscp): the NIC classifies by another field than the switches"),
        ("FG507 hosts/lab01/roce-nic.conf", line_of(lab01, "PFC_EN="),
         "lab01: roce-nic.conf PFC_EN differs at priority 3 0 (plan 1), priority 4 1 (plan 0): PFC pauses other "
         "priorities than the switches'"),
        ("FG507 hosts/lab01/roce-nic.conf", line_of(lab01, "CC="),
         "lab01: roce-nic.conf CC differs: rp_ai_rate 50 (plan 5): DCQCN reacts otherwise to congestion"),
        ("FG507 hosts/lab01/roce-nic.conf", line_of(lab01, "NIC=mlx5_1"),
         "lab01: roce-nic.conf NIC mlx5_1 has MTU 9000 (plan 4200)"),
        ("FG507 hosts/lab02/roce-nic.conf", line_of(lab02, "DSCP_PRIO="),
         "lab02: roce-nic.conf DSCP_PRIO differs at DSCP 26 0 (plan 3): RoCE or CNP packets land in another "
         "priority than the fabric's"),
        ("FG507 hosts/lab02/roce-nic.conf", line_of(lab02, "CMA_ROCE_TOS="),
         "lab02: roce-nic.conf CMA_ROCE_TOS is another value (plan 106): RDMA-CM connections send another DSCP"),
        ("FG507 hosts/lab02/roce-nic.conf", line_of(lab02, "NIC=mlx5_0"),
         "lab02: roce-nic.conf lacks NIC mlx5_3: roce-nic.sh leaves it unconfigured"),
        ("FG507 hosts/lab02/roce-nic.conf", line_of(lab02, "NIC=mlx9_secret"),
         "lab02: roce-nic.conf configures 1 NIC the plan does not have"),
    ]), found


@pytest.mark.parametrize(("old", "new", "says"), [
    ("FORMAT=1\n", "", "the first setting must be FORMAT=, not 'HOST'"),
    ("TRUST=dscp\n", "", "TRUST is missing"),
    ("TRUST=dscp\n", "TRUST=dscp\nSECRETKEY=1\n", "unknown key '...'"),
    ("TRUST=dscp\n", "TRUST=dscp\nTRUST=dscp\n", "TRUST given twice"),
    ("TRUST=dscp\n", "TRUST=dscp\n  PFC_EN=s3cr3t\n", "is not a KEY=VALUE line"),
])
def test_a_plan_the_script_refuses_is_a_finding_without_its_values(old: str, new: str, says: str,
                                                                    tmp_path: Path) -> None:
    spec, fabric, root = site("lab", tmp_path)
    path = root / "hosts" / "lab01" / "roce-nic.conf"
    edit(path, old, new)
    ((where, line, message),) = fg507(spec, fabric, root)
    assert where == "FG507 hosts/lab01/roce-nic.conf" and line == 1
    assert message.startswith("lab01: roce-nic.conf roce-nic.sh refuses it: ") and says in message, message
    assert "SECRETKEY" not in message and "s3cr3t" not in message


def test_a_huge_dcqcn_value_is_a_finding_not_a_traceback(tmp_path: Path) -> None:
    spec, fabric, root = site("lab", tmp_path)
    path = root / "hosts" / "lab01" / "roce-nic.conf"
    edit(path, "rp_ai_rate:5 ", "rp_ai_rate:" + "9" * 5000 + " ")
    ((_, line, message),) = fg507(spec, fabric, root)
    assert line == line_of(path, "CC=") and "CC differs: rp_ai_rate another value (plan 5)" in message


def test_another_format_is_named(tmp_path: Path) -> None:
    spec, fabric, root = site("lab", tmp_path)
    path = root / "hosts" / "lab01" / "roce-nic.conf"
    edit(path, "FORMAT=1\n", "FORMAT=2\n")
    ((_, line, message),) = fg507(spec, fabric, root)
    assert line == line_of(path, "FORMAT=") and "has 2 for FORMAT (plan 1): roce-nic.sh refuses it" in message


def test_a_linked_plan_is_not_followed_and_a_host_with_only_its_plan_is_collected(tmp_path: Path) -> None:
    spec, fabric, root = site("lab", tmp_path)
    secret = tmp_path / "secret.conf"
    secret.write_text("FORMAT=1\nHOST=s3cr3t\n")
    path = root / "hosts" / "lab01" / "roce-nic.conf"
    path.unlink()
    path.symlink_to(secret)
    for other in (root / "hosts" / "lab02").iterdir():
        if other.name != "roce-nic.conf":
            other.unlink()
    found = fg507(spec, fabric, root)
    assert [(where, message.split(":")[0]) for where, _, message in found] == [("FG507 hosts/lab01/roce-nic.conf",
                                                                                 "lab01")]
    assert "symbolic link" in found[0][2] and "s3cr3t" not in found[0][2]
