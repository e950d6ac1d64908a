"""install: every device's list names exactly the files rendered for it, each with a safe destination."""

from __future__ import annotations

import json

import pytest

from fabgen.pipeline import load_spec, plan_fabric, render_fabric
from fabgen.targets.install import check_install_map, host_install_path, switch_install_path
from tests.helpers import EXAMPLE_NAMES, edited, example


def _check(files: dict[str, str], hosts: list[tuple[str, str]], switches: list[str]) -> None:
    for name, profile in hosts:
        text = files[host_install_path(name)]
        assert check_install_map(host_install_path(name), text) == []
        data = json.loads(text)
        assert data["device"] == name and data["kind"] == "host"
        sources = [e["source"] for e in data["files"]]
        rendered = {p for p in files if p.startswith((f"hosts/{name}/", f"hosts/_profiles/{profile}/"))}
        for own in ("sysctl.conf", "nccl.conf", "nccl.env"):  # unlike its profile's: its own instead of the profile's
            if f"hosts/{name}/{own}" in files:
                rendered.discard(f"hosts/_profiles/{profile}/{own}")
        assert sorted(sources) == sorted(rendered - {host_install_path(name)}), name
        sysctls = [e for e in data["files"] if e["source"].endswith("/sysctl.conf")]
        assert [e["dest"] for e in sysctls] == (["/etc/sysctl.d/60-fabgen-roce.conf"] if sysctls else []), name
        nccl = {e["dest"]: e["source"] for e in data["files"] if e["source"].endswith(("/nccl.conf", "/nccl.env"))}
        assert sorted(nccl) == ["/etc/fabgen/nccl.env", "/etc/nccl.conf"], name
        assert len({e["dest"] for e in data["files"]}) == len(sources)
    for name in switches:
        data = json.loads(files[switch_install_path(name)])
        rendered = {p for p in files if p.startswith((f"switches/{name}.", f"switches/{name}/"))}
        assert sorted(e["source"] for e in data["files"]) == sorted(rendered - {switch_install_path(name)}), name


@pytest.mark.parametrize("name", [n for n in EXAMPLE_NAMES if n != "llama3-24k"])
def test_every_device_lists_exactly_its_files(name: str) -> None:
    plan = plan_fabric(load_spec(example(name)))
    files = render_fabric(plan)
    _check(files, [(h.name, h.profile) for h in plan.hosts], [s.name for s in plan.switches])


def test_large_example_one_device_of_each_kind() -> None:
    plan = plan_fabric(load_spec(example("llama3-24k")))
    host = plan.hosts[0]
    files = render_fabric(plan, devices=[host.name, host.profile, "leaf-r0-p00-01"])
    _check(files, [(host.name, host.profile)], ["leaf-r0-p00-01"])


def test_a_host_with_a_nic_out_of_service_installs_its_own_nccl_pair_the_others_their_profiles() -> None:
    plan = plan_fabric(load_spec(example("lab")))
    files = render_fabric(plan, targets=["install-hosts", "nccl-env", "nccl-env-profile"])
    for host in plan.hosts:
        entries = {e["dest"]: e["source"] for e in json.loads(files[host_install_path(host.name)])["files"]}
        owner = "hosts/lab04" if host.name == "lab04" else "hosts/_profiles/lab-node"
        assert (entries["/etc/nccl.conf"], entries["/etc/fabgen/nccl.env"]) == (
            f"{owner}/nccl.conf", f"{owner}/nccl.env"), host.name
        assert "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,mlx5_2:1" + ("\n" if host.name == "lab04" else ",mlx5_3:1\n") in \
            files[entries["/etc/nccl.conf"]]


def test_networkmanager_hosts_list_each_keyfile_and_the_topology_file() -> None:
    text = edited(lambda d: d["host_profiles"]["lab-node"].__setitem__("backend_network", {"config": "networkmanager"}))
    plan = plan_fabric(load_spec(text))
    files = render_fabric(plan)
    _check(files, [(h.name, h.profile) for h in plan.hosts], [s.name for s in plan.switches])
    entries = {e["source"]: e for e in json.loads(files["hosts/lab04/install.json"])["files"]}
    keyfiles = [e for s, e in entries.items() if s.endswith(".nmconnection")]
    assert len(keyfiles) == 3 and {e["mode"] for e in keyfiles} == {"0600"}
    topo = entries["hosts/_profiles/lab-node/nccl-topo.xml"]
    assert topo["dest"] == dict(plan.host("lab04").nccl_env)["NCCL_TOPO_FILE"]


@pytest.mark.parametrize("bad", [
    '{"files": [{"source": "../etc/passwd", "dest": "/etc/x", "mode": "0644", "then": ""}]}',
    '{"files": [{"source": "hosts/a/b", "dest": "etc/x", "mode": "0644", "then": ""}]}',
    '{"files": [{"source": "hosts/a/b", "dest": "/etc/../x", "mode": "0644", "then": ""}]}',
    '{"files": [{"source": "hosts/a/b", "dest": "/etc/x", "mode": "4755", "then": ""}]}',
    ('{"files": [{"source": "hosts/a/b", "dest": "/etc/x", "mode": "0644", "then": ""},'
     ' {"source": "hosts/a/c", "dest": "/etc/x", "mode": "0644", "then": ""}]}'),
])
def test_check_refuses_unsafe_entries(bad: str) -> None:
    assert check_install_map("x.json", bad)


def _list(entries: str) -> str:
    return '{"device": "@", "kind": "switch", "files": [' + entries + "]}"


# Shapes whose verdict could depend on the name standing for "@": in the literal first segment, in a key, in a
# mode, outside a string, or a dest that only some names make equal to another.
TRICKY = [
    _list('{"source": "switches/@.cfg", "dest": "/mnt/@", "mode": "0644", "then": "@"}'),
    _list('{"source": "@/x", "dest": "/x", "mode": "0644", "then": ""}'),
    _list('{"source": "host@/x", "dest": "/x", "mode": "0644", "then": ""}'),
    _list('{"@ource": "hosts/x", "dest": "/x", "mode": "0644", "then": ""}'),
    _list('{"source": "hosts/x", "dest": "/x", "mode": "06@", "then": ""}'),
    '{"files": [], "n": @}',
    _list('{"source": "hosts/x", "dest": "/d/@", "mode": "0644", "then": ""},'
          ' {"source": "hosts/y", "dest": "/d/a", "mode": "0644", "then": ""}'),
]


@pytest.mark.parametrize("shape", TRICKY)
@pytest.mark.parametrize("first", ["b", "a", "44", "hosts", "s", "our", "files"])
def test_a_cached_shape_gives_every_other_name_the_verdict_a_parse_would(shape: str, first: str) -> None:
    from fabgen.targets import install_check

    install_check._PASSED.clear()
    check_install_map(switch_install_path(first), shape.replace("@", first))
    for name in ["b", "a", "44", "hosts", "s", "our", "files", "x.y-z"]:
        text = shape.replace("@", name)
        assert check_install_map(switch_install_path(name), text) == \
            install_check._check(switch_install_path(name), text), (first, name)


def test_the_24k_switch_lists_are_checked_by_one_shape() -> None:
    from fabgen.targets import install_check

    plan = plan_fabric(load_spec(example("llama3-24k")))
    install_check._PASSED.clear()
    files = render_fabric(plan, targets=["install-switches"])
    assert len(files) == 2048 and len(install_check._PASSED) == 1
    path = switch_install_path("leaf-r0-p00-01")
    assert check_install_map(path, files[path].replace("/mnt/flash/startup-config", "/mnt/flash/../x"))


@pytest.mark.parametrize("name", ["lab", "cumulus-pod"])
def test_fast_host_lists_print_what_json_dumps_prints(name: str) -> None:
    """The f-string path of install-hosts must be byte for byte the json.dumps layout, and its check must agree."""
    from fabgen.targets import install
    from fabgen.targets.base import RenderContext
    from fabgen.targets.environment import environment

    plan = plan_fabric(load_spec(example(name)))
    context = RenderContext(plan=plan, env=environment())
    for host in plan.hosts:
        text = install.HOST_TARGET.render(context, host)[host_install_path(host.name)]
        assert text == install._dump(host.name, "host", install.host_entries(plan, host)), host.name
        assert check_install_map("x.json", text) == []


def test_shape_cached_host_check_still_finds_a_bad_or_repeated_entry() -> None:
    """A host list's shape passed once; a list repeating an entry, or holding a bad one, is still refused."""
    plan = plan_fabric(load_spec(example("lab")))
    path = host_install_path("lab01")
    text = render_fabric(plan, ["install-hosts"])[path]
    assert check_install_map(path, text) == []
    lines = text.split("\n")
    assert check_install_map(path, "\n".join([lines[0], lines[1], *lines[1:]]))
    assert check_install_map(path, text.replace('"mode": "0644"', '"mode": "4755"', 1))
    assert check_install_map(path, text.replace('"dest": "/etc/', '"dest": "/etc/../', 1))
