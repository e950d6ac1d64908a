"""host-net: netplan accepted by the real netplan, keyfiles by NetworkManager's own nmcli, strict checks.

``netplan generate`` costs about a third of a second per file on a shared
machine, so the 24k example is sampled (its first and last host and seven
evenly spaced between: every rail and a spread of addresses); the small
examples run every host.
"""

from __future__ import annotations

import configparser
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from fabgen.errors import OutputError
from fabgen.pipeline import load_spec, plan_fabric, render_fabric
from fabgen.plan import FabricPlan
from fabgen.plan.model import Host
from fabgen.targets.hostnet.config import (
    check_host_network_file,
    keyfile_problems,
    netplan_problems,
    own_sysctl,
    parse_keyfile,
    profile_sysctl_path,
    sysctl_key,
    sysctl_path,
    sysctl_problems,
    sysctl_source,
)
from fabgen.targets.hostnet.escape import comment_text, keyfile_value, yaml_str
from tests.helpers import EXAMPLE_NAMES, edited, example, require_tool


@cache
def _plan(name: str) -> FabricPlan:
    return plan_fabric(load_spec(example(name)))


@cache
def _files(name: str) -> dict[str, str]:
    return render_fabric(_plan(name), targets=["host-net", "host-sysctl"])


@cache
def _variant(name: str, config: str) -> tuple[FabricPlan, dict[str, str]]:
    """The example with every profile on ``config``: each example is tested in both variants."""
    def choose(data: dict[str, Any]) -> None:
        for profile in data["host_profiles"].values():
            profile["backend_network"] = {**profile.get("backend_network", {}), "config": config}

    plan = plan_fabric(load_spec(edited(choose, name)))
    return plan, render_fabric(plan, targets=["host-net"])


def _sample(plan: FabricPlan) -> list[Host]:
    if len(plan.hosts) <= 64:
        return list(plan.hosts)
    step = len(plan.hosts) // 8
    return [plan.hosts[i] for i in range(0, len(plan.hosts), step)] + [plan.hosts[-1]]


def _units(path: Path) -> list[tuple[str, dict[str, str]]]:
    """A systemd unit as (section, {key: value}) in order; sections such as [Route] repeat."""
    sections: list[tuple[str, dict[str, str]]] = []
    for line in path.read_text().splitlines():
        if line.startswith("["):
            sections.append((line.strip("[]"), {}))
        elif "=" in line:
            key, _, value = line.partition("=")
            sections[-1][1][key] = value
    return sections


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_real_netplan_accepts_every_host_file(name: str, tmp_path: Path) -> None:
    netplan = require_tool("netplan")
    plan, files = _variant(name, "netplan")
    for host in _sample(plan):
        assert host.network is not None
        root = tmp_path / host.name
        (root / "etc" / "netplan").mkdir(parents=True)
        target = root / "etc" / "netplan" / "60-fabgen-backend.yaml"
        target.write_text(files[f"hosts/{host.name}/netplan.yaml"])
        target.chmod(0o600)
        proc = subprocess.run([netplan, "generate", "--root-dir", str(root)], capture_output=True, text=True,
                              check=False)
        assert proc.returncode == 0 and "Error" not in proc.stderr, (host.name, proc.stderr)
        for iface in host.network.interfaces:
            unit = _units(root / "run" / "systemd" / "network" / f"10-netplan-{iface.netdev}.network")
            sections = {s for s, _ in unit}
            assert {"Match", "Link", "Network", "Route", "RoutingPolicyRule"} <= sections
            get = {s: kv for s, kv in unit}
            assert get["Match"]["Name"] == iface.netdev and get["Link"]["MTUBytes"] == str(iface.mtu)
            assert get["Link"]["RequiredForOnline"] == "no" and get["Network"]["LinkLocalAddressing"] == "no"
            assert get["Network"]["Address"] == iface.address
            assert get["RoutingPolicyRule"] == {"From": iface.rule.source, "Table": str(iface.table),
                                                "Priority": str(iface.rule.priority)}
            routes = [kv for s, kv in unit if s == "Route"]
            assert [r["Destination"] for r in routes] == [r.to for r in iface.routes]
            assert {r["Table"] for r in routes} == {str(iface.table)}
            assert [r.get("Gateway") for r in routes] == [r.via for r in iface.routes]
            assert {r["PreferredSource"] for r in routes} == {iface.address.partition("/")[0]}


def test_real_netplan_rejects_what_our_check_rejects(tmp_path: Path) -> None:
    """The tool test can fail: a route without a gateway or scope is refused by netplan too."""
    netplan = require_tool("netplan")
    text = _variant("lab", "netplan")[1]["hosts/lab01/netplan.yaml"].replace("          scope: link\n", "", 1)
    assert netplan_problems(text)
    (tmp_path / "etc" / "netplan").mkdir(parents=True)
    target = tmp_path / "etc" / "netplan" / "60-fabgen-backend.yaml"
    target.write_text(text.replace("mtu: 4200", "mtu: [4200]", 1))
    target.chmod(0o600)
    proc = subprocess.run([netplan, "generate", "--root-dir", str(tmp_path)], capture_output=True, text=True,
                          check=False)
    assert proc.returncode != 0


@pytest.mark.parametrize("lead, where", [("        - ", "last"), ("          via: ", "last"),
                                         ("          from: ", "first")])
def test_a_leading_zero_octet_is_refused_by_our_check_and_by_netplan(lead: str, where: str, tmp_path: Path) -> None:
    """``ip`` reads ``010`` as octal 8 and ``netplan generate`` refuses it: an address like that must never pass."""
    netplan = require_tool("netplan")
    good = _variant("lab", "netplan")[1]["hosts/lab01/netplan.yaml"]
    address = good.split(f'\n{lead}"')[1].split('"')[0].split("/")[0]
    first, _, rest = address.partition(".")
    head, _, last = address.rpartition(".")
    bad = f"0{first}.{rest}" if where == "first" else f"{head}.0{last}"
    text = good.replace(f'{lead}"{address}', f'{lead}"{bad}', 1)
    assert text != good and not netplan_problems(good)
    assert netplan_problems(text) and check_host_network_file("hosts/lab01/netplan.yaml", text)
    (tmp_path / "etc" / "netplan").mkdir(parents=True)
    target = tmp_path / "etc" / "netplan" / "60-fabgen-backend.yaml"
    target.write_text(text)
    target.chmod(0o600)
    proc = subprocess.run([netplan, "generate", "--root-dir", str(tmp_path)], capture_output=True, text=True,
                          check=False)
    assert proc.returncode != 0 and "Error in network definition" in proc.stderr, proc.stderr


def test_a_leading_zero_octet_is_refused_in_a_keyfile() -> None:
    files = _networkmanager()[1]
    path, good = next((p, t) for p, t in sorted(files.items()) if p.endswith(".nmconnection"))
    address = good.split("address1=")[1].split("/")[0]
    head, _, last = address.rpartition(".")
    for bad in (f"{head}.0{last}", f"0{address}"):
        text = good.replace(f"={address}/", f"={bad}/", 1)
        assert text != good and keyfile_problems(text) and check_host_network_file(path, text), bad
    assert not check_host_network_file(path, good)


def _networkmanager(name: str = "lab") -> tuple[FabricPlan, dict[str, str]]:
    return _variant(name, "networkmanager")


NM_DEFAULTS_OMITTED = {("connection", "autoconnect", "true")}
"""Values nmcli drops when it writes a keyfile back because they are NetworkManager's defaults."""


def _nm_mismatches(nmcli: str, text: str) -> list[str]:
    """What NetworkManager reads differently from what the keyfile says.

    NM's keyfile reader drops a value it cannot parse with a warning and goes
    on, so exit status alone proves little: every key we wrote must come back
    from ``nmcli --offline`` with the same value.
    """
    proc = subprocess.run([nmcli, "--offline", "connection", "modify", "connection.autoconnect", "yes"],
                          input=text, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return [proc.stderr.strip()]
    back = parse_keyfile(proc.stdout.replace("\n[proxy]\n", "\n"))
    wrong = []
    for section, values in parse_keyfile(text).items():
        for key, value in values.items():
            if key.startswith("routing-rule"):
                value = value.replace("/32 table", " table")  # nmcli prints a host address bare
            if (section, key, value) in NM_DEFAULTS_OMITTED:
                if key in back.get(section, {}):
                    wrong.append(f"[{section}] {key} came back")
            elif back.get(section, {}).get(key) != value:
                wrong.append(f"[{section}] {key}={value} read as {back.get(section, {}).get(key)!r}")
    return wrong


@pytest.mark.parametrize("name", [n for n in EXAMPLE_NAMES if n != "llama3-24k"])  # its shape is lab's, 8 NICs
def test_networkmanager_reads_every_keyfile_as_written(name: str) -> None:
    nmcli = require_tool("nmcli")
    plan, files = _networkmanager(name)
    keyfiles = {p: t for p, t in files.items() if p.endswith(".nmconnection")}
    assert not any(p.endswith("netplan.yaml") for p in files)
    expected = sum(len(h.network.interfaces) for h in plan.hosts if h.network)
    assert len(keyfiles) == expected > 0
    sample = {f"hosts/{h.name}/" for h in _sample(plan)}
    for path, text in keyfiles.items():
        if path[:path.index("/nm/") + 1] in sample:
            assert _nm_mismatches(nmcli, text) == [], path


@pytest.mark.parametrize(("old", "new"), [("address1=10.10.0.1/31", "address1=10.10.0.1/33"),
                                          ("mtu=4200", "mtu=abc"), ("method=manual", "method=bogus")])
def test_networkmanager_read_back_catches_a_broken_keyfile(old: str, new: str) -> None:
    nmcli = require_tool("nmcli")
    text = _networkmanager()[1]["hosts/lab01/nm/fabgen-ens1np0.nmconnection"]
    broken = text.replace(old, new)
    assert broken != text and keyfile_problems(broken)
    assert _nm_mismatches(nmcli, broken)


def test_keyfile_content_follows_the_plan() -> None:
    plan, files = _networkmanager()
    host = plan.host("lab02")
    assert host.network is not None
    for iface in host.network.interfaces:
        data = parse_keyfile(files[f"hosts/lab02/nm/fabgen-{iface.netdev}.nmconnection"])
        assert data["connection"]["interface-name"] == iface.netdev and data["ethernet"]["mtu"] == str(iface.mtu)
        assert data["ipv4"]["address1"] == iface.address
        assert data["ipv4"]["routing-rule1"] == f"priority {iface.rule.priority} from {iface.rule.source} table {iface.table}"
        assert data["ipv4"]["route2"] == f"{iface.routes[1].to},{iface.gateway}"
        assert data["ipv6"]["method"] == "disabled"
    uuids = {parse_keyfile(t)["connection"]["uuid"] for p, t in files.items() if p.endswith(".nmconnection")}
    assert len(uuids) == sum(1 for p in files if p.endswith(".nmconnection"))  # unique, and stable (goldens)


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_every_file_passes_its_own_check_and_sysctl_covers_each_nic(name: str) -> None:
    plan, files = _plan(name), _files(name)
    for path, text in files.items():
        assert check_host_network_file(path, text) == [], path
    for host in _sample(plan):
        assert host.network is not None
        source = sysctl_source(plan.spec, host)
        assert source is not None
        lines = set(files[source].splitlines())
        for iface in host.network.interfaces:
            prefix, sep = sysctl_key(iface.netdev)
            assert {f"{prefix}{sep}arp_ignore = 1", f"{prefix}{sep}arp_announce = 2",
                    f"{prefix}{sep}rp_filter = 2"} <= lines
        assert sum(line.endswith("rp_filter = 2") for line in lines) == len(host.network.interfaces)


def test_sysctl_is_one_file_per_profile_but_for_hosts_whose_nics_differ() -> None:
    """lab04 has mlx5_3 out of service: it keeps a file of its own without that NIC; the others share one."""
    plan, files = _plan("lab"), _files("lab")
    sysctls = sorted(p for p in files if p.endswith("/sysctl.conf"))
    assert sysctls == [profile_sysctl_path("lab-node"), sysctl_path("lab04")]
    assert [h.name for h in plan.hosts if own_sysctl(plan.spec, h)] == ["lab04"]
    shared, own = files[profile_sysctl_path("lab-node")], files[sysctl_path("lab04")]
    assert shared.startswith("# Generated by fabgen for cluster lab, profile lab-node;")
    assert own.startswith("# Generated by fabgen for cluster lab, host lab04;")
    assert "ens4np0" in shared and "ens4np0" not in own
    assert shared.splitlines()[1:] == [line for line in own.splitlines()[1:]] + [
        "", "# mlx5_3, rail 3", "net.ipv4.conf.ens4np0.arp_ignore = 1", "net.ipv4.conf.ens4np0.arp_announce = 2",
        "net.ipv4.conf.ens4np0.rp_filter = 2"]


def test_no_profile_sysctl_when_every_host_has_its_own() -> None:
    """A profile copy no host installs would be an orphan in the tree (and in no install.json)."""
    text = edited(lambda d: d["hosts"][0].__setitem__("overrides", {
        f"lab0{n}": {"nics_out_of_service": ["mlx5_3"]} for n in range(1, 5)}))
    plan = plan_fabric(load_spec(text))
    files = render_fabric(plan, targets=["host-net", "host-sysctl"])
    assert sorted(p for p in files if p.endswith("/sysctl.conf")) == [sysctl_path(f"lab0{n}") for n in range(1, 5)]


def test_sysctl_key_for_a_dotted_netdev() -> None:
    assert sysctl_key("ens1np0") == ("net.ipv4.conf.ens1np0", ".")
    assert sysctl_key("ens1.100") == ("net/ipv4/conf/ens1.100", "/")
    assert sysctl_problems("net/ipv4/conf/ens1.100/rp_filter = 2\n") == []
    assert sysctl_problems("net.ipv4.conf.ens1np0.rp_filter = 2\nnet.ipv4.ip_forward = 1\n")


def test_strict_readers_refuse_what_a_consumer_would_misread() -> None:
    good = _variant("lab", "netplan")[1]["hosts/lab01/netplan.yaml"]
    assert netplan_problems(good) == []
    assert netplan_problems(good.replace("dhcp4: false", "dhcp4: true", 1))
    assert netplan_problems(good.replace("  version: 2\n", "  version: 2\n  renderer: networkd\n"))
    keyfile = _networkmanager()[1]["hosts/lab01/nm/fabgen-ens1np0.nmconnection"]
    assert keyfile_problems(keyfile) == []
    assert keyfile_problems(keyfile + "mtu=9000\n")  # a key twice
    assert keyfile_problems(keyfile.replace("route3=", "route4="))  # a gap
    assert keyfile_problems(keyfile.replace("mtu=4200", " mtu=4200"))


@pytest.mark.parametrize("value", ["a\nb", "x: y", "#c", "a b", "\"q\"", "it's"])
def test_filters_never_let_a_value_open_a_line(value: str) -> None:
    assert "\n" not in yaml_str(value)
    with pytest.raises(ValueError):
        keyfile_value(value + "\n")
    if "\n" in value:
        with pytest.raises(ValueError):
            comment_text(value)
    with pytest.raises(TypeError):
        yaml_str(None)


def test_a_hostile_overlay_value_fails_the_render(tmp_path: Path) -> None:
    """A user template printing something unsafe into a keyfile stops the run rather than writing it."""
    (tmp_path / "host-net").mkdir()
    (tmp_path / "host-net" / "netplan.yaml.j2").write_text("{{ 'a\\nb' | keyfile_value }}\n")
    with pytest.raises(OutputError):
        render_fabric(_plan("lab"), targets=["host-net"], templates=tmp_path)


def test_host_without_backend_network_gets_no_files() -> None:
    """Validation refuses a spec whose host has no NIC in service; a plan handed over by hand can still say it."""
    import dataclasses

    lab = plan_fabric(load_spec(edited(lambda data: None)))
    hosts = tuple(dataclasses.replace(h, network=None) if h.name == "lab01" else h for h in lab.hosts)
    files = render_fabric(dataclasses.replace(lab, hosts=hosts), targets=["host-net"])
    assert not any(p.startswith("hosts/lab01/") for p in files)
    assert "hosts/lab02/netplan.yaml" in files


def test_keyfile_parser_is_case_sensitive() -> None:
    with pytest.raises(ValueError):
        parse_keyfile("[a]\nKey=1\nKey=2\n")
    assert parse_keyfile("[a]\nKey=1\nkey=2\n") == {"a": {"Key": "1", "key": "2"}}
    assert isinstance(configparser.Error("x"), Exception)


def test_shape_fill_matches_a_full_render_for_every_host() -> None:
    """The once-per-shape render pasted with each host's values is byte for byte the full render of that host."""
    from fabgen.targets.base import RenderContext
    from fabgen.targets.environment import environment
    from fabgen.targets.hostnet.config import TARGET, render_host_network

    for name in ("lab", "cumulus-pod"):
        plan = _plan(name)
        context = RenderContext(plan=plan, env=environment())
        for host in plan.hosts:
            assert TARGET.render(context, host) == render_host_network(plan.spec.cluster.name, host, context.env,
                                                                       own_sysctl(plan.spec, host))
        assert any(s.split is not None for s in context.cache["host-net-shapes"].values())  # the fast path ran


def test_an_overlay_renders_every_host_in_full(tmp_path: Path) -> None:
    """A user template may compute on a value (here the host name), which pasting values could not reproduce."""
    (tmp_path / "host-net").mkdir()
    shipped = Path(__file__).resolve().parents[3] / "templates" / "host-net" / "netplan.yaml.j2"
    (tmp_path / "host-net" / "netplan.yaml.j2").write_text(
        "# {{ host.name | upper | comment_text }}\n" + shipped.read_text())
    files = render_fabric(_plan("lab"), targets=["host-net"], templates=tmp_path)
    assert files["hosts/lab01/netplan.yaml"].startswith("# LAB01\n")
    assert files["hosts/lab02/netplan.yaml"].startswith("# LAB02\n")


def test_check_finds_a_bad_value_in_one_host_among_identical_shapes() -> None:
    """Netplan checks are cached per normalised shape: a broken address in one host's file must not hide behind it."""
    from fabgen.targets.hostnet.config import check_host_network_file

    files = {p: t for p, t in _files("lab").items() if p.endswith("/netplan.yaml")}
    assert len(files) >= 2 and not any(check_host_network_file(p, t) for p, t in files.items())
    path, text = sorted(files.items())[-1]
    address = text.split('addresses:\n        - "')[1].split("/")[0]
    for bad in (address + ".9", "300.1.2.3", "10.256.0.1", "10.1.2.099", "2555.1.1.1", address + "\\n"):
        broken = text.replace(f'"{address}/', f'"{bad}/', 1)
        assert broken != text and check_host_network_file(path, broken), bad
    assert not check_host_network_file(path, text)


def test_quick_octet_is_exactly_the_canonical_0_to_255() -> None:
    """The netplan check's fast address pattern may replace only what the strict one accepts (else a bad address
    would hide behind the placeholder); here it accepts exactly the canonical octets."""
    import re

    from fabgen.targets.hostnet.config import _IPV4, _OCTET

    strict = re.compile(rf"{_IPV4}")
    quick = re.compile(_OCTET)
    for n in range(1000):
        for text in {str(n), f"{n:02d}", f"{n:03d}"}:
            assert (quick.fullmatch(text) is not None) == (n <= 255 and text == str(n)), text
            if quick.fullmatch(text):
                assert strict.fullmatch(f"{text}.0.0.0"), text


@pytest.mark.parametrize("values", [
    ["ens1np0"], ["10.0.0.1/31", "leaf-01", "Ethernet1/1"], [""], [" a"], ["a "], ["a", " b"], ["a ", "b"],
    ["a\tb"], ["a\nb"], ["a#b"], ['a"b'], ["a{b}"], ["x" * 200], ["x" * 201], [], ["é"], ["a b", "c=d,e:f"],
])
def test_print_verbatim_agrees_with_the_filters_value_by_value(values: list[str]) -> None:
    """The one-scan test must say yes exactly when every value passes keyfile_value and prints as itself in YAML."""
    from fabgen.targets.hostnet.escape import print_verbatim

    def verbatim(value: str) -> bool:
        try:
            keyfile_value(value)
        except ValueError:
            return False
        return "\t" not in value and yaml_str(value) == f'"{value}"'

    assert print_verbatim(values) == (bool(values) and all(verbatim(v) for v in values))


def test_the_safe_bytes_are_the_keyfile_value_class() -> None:
    """print_verbatim deletes _SAFE_BYTES where keyfile_value matches its class: the two must be one set."""
    from fabgen.targets.hostnet.escape import _KEYFILE_VALUE, _SAFE_BYTES

    assert {b for b in range(128) if _KEYFILE_VALUE.match(chr(b) * 2)} == set(_SAFE_BYTES)
