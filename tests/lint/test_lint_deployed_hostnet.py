"""``lint --deployed``, FG506: each host's collected netplan or NetworkManager keyfiles against fabgen's render."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lint_support import EXAMPLES, write_deployed
from test_lint_deployed import edit

from fabgen.cli import main
from fabgen.lint import lint
from fabgen.lint.deployed import read_deployed
from fabgen.lint.deployed_hostnet import _Shapes
from fabgen.pipeline import load_spec, plan_fabric
from fabgen.targets.hostnet.parse import parse_keyfile_setup, parse_netplan
from fabgen.targets.render import render_files

SPECS = {name: EXAMPLES / name / "spec.yaml" for name in ("lab", "sonic-pod", "cumulus-pod")}
"""The examples themselves: cumulus-pod's hosts use NetworkManager keyfiles (the lint bases' copy does not)."""


def site(base: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    """test_lint_deployed's site, from the example itself (the lint bases' cumulus-pod has no keyfiles)."""
    fabric = plan_fabric(load_spec(SPECS[base]))
    write_deployed(fabric, tmp_path / "collected")
    return fabric.spec, fabric, tmp_path / "collected"


def line_of(path: Path, text: str, start: int = 1) -> int:
    """1-based line of the first line at or after ``start`` that contains ``text``."""
    lines = path.read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if n >= start and text in line)


def fg506(spec, fabric, root: Path) -> list[tuple[str, int, str]]:  # type: ignore[no-untyped-def]
    findings = lint(spec, fabric, deployed=root, config={"select": ["FG506"]})
    assert all(f.code == "FG506" for f in findings)
    return [(str(Path(f.file).relative_to(root)), f.line, f.message) for f in findings]


@pytest.mark.parametrize("base", ["lab", "sonic-pod", "cumulus-pod"])
def test_a_generated_tree_has_no_host_network_drift(base: str, tmp_path: Path) -> None:
    spec = load_spec(SPECS[base])
    fabric = plan_fabric(spec)
    root = tmp_path / "out"
    assert main(["generate", str(SPECS[base]), "-o", str(root), "-q"]) == 0
    assert lint(spec, fabric, deployed=root, config={"select": ["FG5"]}) == []
    networks = read_deployed(root, fabric).host_networks
    assert {n.host for n in networks} == {h.name for h in fabric.hosts if h.network and h.network.interfaces}
    assert all(n.verbatim and n.files for n in networks), "files as rendered are not even parsed"
    keyfiles = list(root.glob("hosts/*/nm/*.nmconnection"))
    assert bool(keyfiles) == (base == "cumulus-pod"), "cumulus-pod is the example whose profile uses NetworkManager"


def test_reordered_and_commented_files_are_not_drift(tmp_path: Path) -> None:
    spec, fabric, root = site("lab", tmp_path)
    netplan = root / "hosts" / "lab01" / "netplan.yaml"
    edit(netplan, "      optional: true\n      mtu: 4200\n", "      mtu: 4200   # jumbo, see RoCE MTU\n      optional: true\n")
    edit(netplan, '          via: "10.10.0.0"\n          from: "10.10.0.1"\n',
         "          from: '10.10.0.1'\n          via: 10.10.0.0\n")
    edit(netplan, "  version: 2\n", "  # collected on 2024-05-01\n  version: 2\n")
    edit(netplan, '      addresses:\n        - "10.10.0.1/31"\n', '      addresses: ["10.10.0.1/31"]\n')
    # two rules swapped: order of routes does not matter either
    text = netplan.read_text()
    first = '        - to: "10.10.0.64/31"\n          scope: link\n          from: "10.10.0.65"\n          table: 101\n'
    second = '        - to: "10.10.0.0/24"\n          via: "10.10.0.64"\n          from: "10.10.0.65"\n          table: 101\n'
    assert first + second in text
    netplan.write_text(text.replace(first + second, second + first))
    keyfile = tmp_path / "nm"
    spec_nm, fabric_nm, root_nm = site("cumulus-pod", keyfile)
    path = root_nm / "hosts" / "node01" / "nm" / "fabgen-ens1np0.nmconnection"
    edit(path, "[ipv6]\nmethod=disabled\n", "# by hand\n\n[ipv6]\nmethod=disabled\n")
    edit(path, "never-default=true\n", "")
    text = path.read_text()
    ipv6 = text[text.index("[ipv6]"):]
    path.write_text(ipv6 + "\n" + text[:text.index("[ipv6]")])
    assert fg506(spec, fabric, root) == []
    assert fg506(spec_nm, fabric_nm, root_nm) == []


def test_planted_netplan_edits_are_found_at_their_lines(tmp_path: Path) -> None:
    spec, fabric, root = site("lab", tmp_path)
    # lab01: one route gone, another with a changed gateway; lab02: a rule gone, an MTU changed;
    # lab03: an address changed, one planned interface gone and one the plan does not have.
    lab01 = root / "hosts" / "lab01" / "netplan.yaml"
    edit(lab01, '        - to: "10.255.0.0/24"\n          via: "10.10.0.64"\n          from: "10.10.0.65"\n'
                '          table: 101\n', "")
    edit(lab01, '          via: "10.10.0.128"\n', '          via: "10.99.0.131"\n')
    lab02 = root / "hosts" / "lab02" / "netplan.yaml"
    edit(lab02, '      routing-policy:\n        - from: "10.10.0.195/32"\n          table: 103\n'
                '          priority: 1003\n', "")
    edit(lab02, "mtu: 4200", "mtu: 9123")
    lab03 = root / "hosts" / "lab03" / "netplan.yaml"
    edit(lab03, '"10.10.0.5/31"', '"172.31.77.9/31"')
    text = lab03.read_text()
    start = text.index('    "ens2np0":')
    end = text.index('    "ens3np0":')
    lab03.write_text(text[:start] + text[end:].replace('    "ens3np0":', text[start:end].replace(
        '"ens2np0"', '"vlan7secret"').replace("mtu: 4200", "mtu: 1500") + '    "ens3np0":', 1))

    found = fg506(spec, fabric, root)
    messages = " | ".join(m for _, _, m in found)
    for secret in ("10.99.0.131", "9123", "172.31.77.9", "vlan7secret", "1500"):
        assert secret not in messages, f"a deployed value the plan lacks is echoed: {secret}"
    assert sorted(found) == sorted([
        ("hosts/lab01/netplan.yaml", line_of(lab01, '"ens2np0":'),
         "lab01: ens2np0 lacks the route to 10.255.0.0/24 via 10.10.0.64 from 10.10.0.65 table 101"),
        ("hosts/lab01/netplan.yaml", line_of(lab01, "- to:", line_of(lab01, "10.99.0.131") - 1),
         "lab01: ens3np0: the route to 10.10.0.0/24 via 10.10.0.128 from 10.10.0.129 table 102 has another via "
         "(plan 10.10.0.128)"),
        ("hosts/lab02/netplan.yaml", line_of(lab02, '"ens4np0":'),
         "lab02: ens4np0 lacks the routing-policy rule from 10.10.0.195/32 table 103 priority 1003"),
        ("hosts/lab02/netplan.yaml", line_of(lab02, "mtu: 9123"), "lab02: ens1np0 has another MTU (plan 4200)"),
        ("hosts/lab03/netplan.yaml", line_of(lab03, "172.31.77.9"),
         "lab03: ens1np0 has another address instead of 10.10.0.5/31"),
        ("hosts/lab03/netplan.yaml", line_of(lab03, "vlan7secret"),
         "lab03: 1 interface the plan does not have is configured"),
        ("hosts/lab03/netplan.yaml", 1, "lab03: planned interface ens2np0 is not configured"),
    ]), found


def test_a_value_the_plan_has_elsewhere_is_named(tmp_path: Path) -> None:
    """An address swapped between two NICs is the plan's own: it is shown, so the swap can be seen."""
    spec, fabric, root = site("lab", tmp_path)
    edit(root / "hosts" / "lab01" / "netplan.yaml", '- "10.10.0.1/31"', '- "10.10.0.65/31"')
    (found,) = fg506(spec, fabric, root)
    assert found[2] == "lab01: ens1np0 has address 10.10.0.65/31 instead of 10.10.0.1/31"


def test_planted_keyfile_edits(tmp_path: Path) -> None:
    spec, fabric, root = site("cumulus-pod", tmp_path)
    nm = root / "hosts" / "node02" / "nm"
    ens1 = nm / "fabgen-ens1np0.nmconnection"
    text = ens1.read_text()
    route = next(line for line in text.splitlines() if line.startswith("route2=")).split(",")[1]
    edit(ens1, f",{route}\n", ",10.30.9.9\n")
    edit(ens1, "routing-rule1=priority 1000 ", "routing-rule1=priority 4444 ")
    (nm / "fabgen-ens3np0.nmconnection").unlink()
    extra = text.replace("interface-name=ens1np0", "interface-name=hidden0")
    (nm / "extra.nmconnection").write_text(extra)
    found = fg506(spec, fabric, root)
    messages = " | ".join(m for _, _, m in found)
    assert "10.30.9.9" not in messages and "4444" not in messages and "hidden0" not in messages
    assert sorted((f, line) for f, line, _ in found) == sorted([
        ("hosts/node02/nm/fabgen-ens1np0.nmconnection", line_of(ens1, "route2=")),
        ("hosts/node02/nm/fabgen-ens1np0.nmconnection", line_of(ens1, "routing-rule1=")),
        ("hosts/node02/nm/extra.nmconnection", line_of(nm / "extra.nmconnection", "interface-name=")),
        ("hosts/node02/nm/fabgen-ens3np0.nmconnection", 0),
    ]), found
    assert any(m.endswith(f"has another via (plan {route})") for _, _, m in found), messages
    assert any("routing-policy rule" in m and m.endswith("has another priority (plan 1000)") for _, _, m in found)
    assert any(m == "node02: planned interface ens3np0 is not configured (no fabgen-ens3np0.nmconnection in the tree)"
               for _, _, m in found)


def test_ipv6_link_local_on_a_backend_nic_is_found(tmp_path: Path) -> None:
    spec, fabric, root = site("lab", tmp_path)
    lab01 = root / "hosts" / "lab01" / "netplan.yaml"
    text = lab01.read_text()
    lab01.write_text(text.replace("      link-local: []\n", "      link-local: [ipv6]\n", 1))
    (found,) = fg506(spec, fabric, root)
    assert found == ("hosts/lab01/netplan.yaml", line_of(lab01, "link-local: [ipv6]"),
                     "lab01: ens1np0 has IPv6 link-local addressing on (plan off)")
    # netplan's default, when the key is gone, is link-local IPv6 on too
    lab01.write_text(text.replace("      link-local: []\n", "", 1))
    (found,) = fg506(spec, fabric, root)
    assert found[2] == "lab01: ens1np0 has IPv6 link-local addressing on (plan off)"
    assert found[1] == line_of(lab01, '"ens1np0":')

    spec, fabric, root = site("cumulus-pod", tmp_path / "nm")
    ens1 = root / "hosts" / "node02" / "nm" / "fabgen-ens1np0.nmconnection"
    edit(ens1, "[ipv6]\nmethod=disabled\n", "[ipv6]\nmethod=link-local\n")
    (found,) = fg506(spec, fabric, root)
    assert found == ("hosts/node02/nm/fabgen-ens1np0.nmconnection", line_of(ens1, "method=link-local"),
                     "node02: ens1np0 has IPv6 link-local addressing on (plan off)")


def test_a_symlinked_netplan_file_is_refused_not_followed(tmp_path: Path) -> None:
    spec, fabric, root = site("lab", tmp_path)
    secret = tmp_path / "secret.yaml"
    secret.write_text('network:\n  version: 2\n  ethernets:\n    "ens1np0": {mtu: 31337, addresses: ["10.66.6.6/31"]}\n')
    netplan = root / "hosts" / "lab01" / "netplan.yaml"
    netplan.unlink()
    os.symlink(secret, netplan)
    (found,) = fg506(spec, fabric, root)
    assert found[:2] == ("hosts/lab01/netplan.yaml", 1)
    assert "symbolic link" in found[2] and "31337" not in found[2] and "10.66" not in found[2], found


@pytest.mark.parametrize(("old", "new", "says"), [
    ("mtu: 4200", "mtu: [secret-mtu]", "mtu must be an integer, not another value"),
    ('"10.10.0.1/31"', '"10.10.0.1/31 dev lo secret"', "address '...' is not an address"),
    ("      optional: true\n", "      optional: true\n      secretkey: 1\n", "'...' is not a key fabgen writes"),
    ("          scope: link\n", "          scope: link\n          secretopt: 7\n",
     "a route not of the form fabgen writes: ..."),
    ("network:\n", "network: [secret\n", "not YAML"),
])
def test_an_unreadable_file_is_a_finding_without_its_values(tmp_path: Path, old: str, new: str, says: str) -> None:
    spec, fabric, root = site("lab", tmp_path)
    edit(root / "hosts" / "lab01" / "netplan.yaml", old, new)
    (found,) = fg506(spec, fabric, root)
    assert found[0] == "hosts/lab01/netplan.yaml" and "secret" not in found[2], found
    assert found[2].startswith("lab01: cannot read this file as netplan: ") and says in found[2], found


def test_a_host_with_only_host_network_files_is_not_missing(tmp_path: Path) -> None:
    spec, fabric, root = site("lab", tmp_path)
    (root / "hosts" / "lab02" / "nccl.conf").unlink()
    assert lint(spec, fabric, deployed=root, config={"select": ["FG5"]}) == []


@pytest.mark.parametrize("base", ["lab", "cumulus-pod"])
def test_a_parse_by_shape_is_the_parse(base: str) -> None:
    """Files that differ only in addresses and comments share one parse: it must be what the parser returns."""
    fabric = plan_fabric(load_spec(SPECS[base]))
    files, _ = render_files(fabric, ["host-net"])
    shapes = _Shapes()
    variants = {}
    for rel, text in files.items():
        if rel.endswith((".yaml", ".nmconnection")):
            variants[rel] = text
            # the same host with its addresses moved and a comment of its own: still one shape
            variants[rel + "~"] = text.replace("10.", "11.").replace("# Generated by", "# Collected from")
    for rel, text in variants.items():
        name = rel.removesuffix("~")
        direct = parse_netplan(name, text) if name.endswith(".yaml") else [parse_keyfile_setup(name, text)]
        assert [s for s, _ in shapes.parse(name, text)] == direct, rel
    assert len(shapes._seen) < len(variants) / 2, "hosts of one shape are parsed once"


def _outcome(parse, *args):  # type: ignore[no-untyped-def]
    """What a parse gives: its setups, or the refusal's text."""
    from fabgen.targets.hostnet.parse import HostFileError

    try:
        return parse(*args)
    except HostFileError as exc:
        return str(exc)


@pytest.mark.parametrize("base", ["lab", "cumulus-pod"])
def test_a_parse_by_shape_never_differs_from_the_parse_on_tricky_variants(base: str) -> None:
    """Variants of one skeleton built to trip a reused parse: two addresses made one, an address made
    ``0.0.0.0``, an address written in a form the parser refuses or reads differently, a comment that gains a
    quote. Each must give exactly what parsing the file gives (the same setups, or the same refusal)."""
    import re

    fabric = plan_fabric(load_spec(SPECS[base]))
    files, _ = render_files(fabric, ["host-net"])
    rel, text = next((r, t) for r, t in sorted(files.items()) if r.endswith((".yaml", ".nmconnection")))
    addresses = sorted(set(re.findall(r"\b\d+\.\d+\.\d+\.\d+\b", text)))
    assert len(addresses) >= 2, "the file has addresses to play with"
    first, second = addresses[0], addresses[1]
    variants = [
        text.replace(second, first),  # two addresses become one: equalities the first parse did not have
        text.replace(first, "0.0.0.0"),  # a keyfile's "no gateway"
        text.replace(first, "010.010.0.1"),  # not canonical: ipaddress refuses leading zeros
        text.replace(first, "10.10.0.300"),  # not an address at all
        text.replace("# Generated by", "# Generated 'by"),  # a comment with a quote
        text.replace("# Generated by", '# "Generated by'),
    ]
    direct_parse = parse_netplan if rel.endswith(".yaml") else (lambda r, t: [parse_keyfile_setup(r, t)])
    shapes = _Shapes()
    assert [s for s, _ in shapes.parse(rel, text)] == direct_parse(rel, text)  # the skeleton is now known
    for variant in variants:
        assert variant != text
        direct = _outcome(direct_parse, rel, variant)
        by_shape = _outcome(lambda r, t: [s for s, _ in shapes.parse(r, t)], rel, variant)
        assert by_shape == direct, variant[:200]
