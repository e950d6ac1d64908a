"""``install``: where each output file goes on its device, as ``hosts/NAME/install.json`` and
``switches/NAME.install.json``.

Why one file per device rather than a field in ``manifest.json``: a profile's
files (``nccl-topo.xml``, ``nic-firmware.sh``, the boot unit) are installed on
every host of that profile, so a per-file destination cannot say *which*
hosts; a host's own list names every file it needs, its profile's included,
so the host's directory is enough to set the host up (the topology file is
reachable from it by its ``source`` path). Being ordinary target output, the
lists are checked, covered by goldens and ``--check``, and ``--device`` renders
exactly the devices it renders the files of.

Each entry: ``source`` (path in the output tree), ``dest`` (absolute path on the
device), ``mode`` (octal string) and ``then`` (what makes the device read it).
``tests/targets/test_install.py`` checks that every list names exactly the files
rendered for its device, so a target added without an entry here fails there.
"""

from __future__ import annotations

import json
import re

from fabgen.plan.host_intents import topology_file_path
from fabgen.plan.model import FabricPlan, Host, Switch
from fabgen.targets.base import RenderContext, Target
from fabgen.targets.hostnet import boot
from fabgen.targets.hostnet import config as hostnet
from fabgen.targets.install_check import SAFE_NAME
from fabgen.targets.install_check import check_install_map as check_install_map
from fabgen.targets.mlx5 import scripts as mlx5
from fabgen.targets.nccl.env import nccl_sources
from fabgen.targets.nccl.topo import topology_path

Entry = dict[str, str]


def _entry(source: str, dest: str, mode: str, then: str) -> Entry:
    return {"source": source, "dest": dest, "mode": mode, "then": then}


NCCL_ENV_DEST = "/etc/fabgen/nccl.env"
FIRMWARE_DEST = "/usr/local/sbin/nic-firmware.sh"


def host_entries(plan: FabricPlan, host: Host) -> list[Entry]:
    """Every file one host needs, its profile's included, in install order."""
    spec = plan.spec
    profile = host.profile
    entries: list[Entry] = []
    net = host.network
    if net is not None and net.interfaces:
        if net.config == "netplan":
            entries.append(_entry(hostnet.netplan_path(host.name), hostnet.NETPLAN_DEST, "0600", "netplan apply"))
        else:
            entries.extend(_entry(hostnet.keyfile_path(host.name, i.netdev),
                                  f"{hostnet.KEYFILE_DIR}/{hostnet.keyfile_name(i.netdev)}", "0600",
                                  "nmcli connection reload")
                           for i in net.interfaces)
        sysctl = hostnet.sysctl_source(spec, host)
        if sysctl is not None:
            entries.append(_entry(sysctl, hostnet.SYSCTL_DEST, "0644", "sysctl --system"))
    if plan.firmware.get(profile) is not None:
        entries.append(_entry(f"hosts/_profiles/{profile}/nic-firmware.sh", FIRMWARE_DEST, "0755",
                              "run it once; a firmware reset or reboot makes it active"))
    if host.nic_intent is not None:
        entries.append(_entry(mlx5.plan_path(host.name), boot.NIC_PLAN_DEST, "0644",
                              "read by roce-nic.sh at every run of fabgen-roce-nic.service"))
    if hostnet.profile_interfaces(spec, profile):
        entries.extend([
            _entry(mlx5.nic_script_path(profile), boot.NIC_SCRIPT_DEST, "0755",
                   "run by fabgen-roce-nic.service; the same file on every host"),
            _entry(boot.unit_path(profile), boot.UNIT_DEST, "0644",
                   "systemctl daemon-reload && systemctl enable --now fabgen-roce-nic.service"),
            _entry(boot.udev_path(profile), boot.UDEV_DEST, "0644", "udevadm control --reload"),
            _entry(boot.lldpd_path(profile), boot.LLDPD_DEST, "0644", "systemctl restart lldpd"),
        ])
    conf, env = nccl_sources(plan, host)
    entries.extend([
        _entry(topology_path(profile), topology_file_path(spec), "0644", "read by NCCL at init (NCCL_TOPO_FILE)"),
        _entry(conf, "/etc/nccl.conf", "0644", "read by NCCL at init"),
        _entry(env, NCCL_ENV_DEST, "0644", "EnvironmentFile= of the job's unit"),
    ])
    return entries


def switch_entries(switch: Switch) -> list[Entry]:
    return _switch_entries(switch.os, switch.name)


def _switch_entries(os: str, name: str) -> list[Entry]:
    if os == "eos":
        return [_entry(f"switches/{name}.session", f"/mnt/flash/{name}.session", "0644",
                       "a live switch: feed it to the CLI (configure session: fabgen's sections only), review "
                       "the diff, commit timer, then commit"),
                _entry(f"switches/{name}.cfg", "/mnt/flash/startup-config", "0644",
                       "a new switch only: configure replace flash:startup-config (or reload) makes it the whole "
                       "config, erasing users, AAA and all else fabgen does not write")]
    if os == "sonic":
        return [_entry(f"switches/{name}/config_db.json", "/etc/sonic/config_db.json", "0644",
                       "fabgen's tables only: merge with `config load`, or `config reload` after merging")]
    if os == "cumulus":
        return [_entry(f"switches/{name}/patch.yaml", "/etc/fabgen/nvue-patch.yaml", "0644",
                       "a live switch: nv config patch /etc/fabgen/nvue-patch.yaml (fabgen's subtrees only), "
                       "nv config diff, then nv config apply"),
                _entry(f"switches/{name}/startup.yaml", "/etc/nvue.d/startup.yaml", "0644",
                       "a new switch only: nv config apply startup makes it the whole configuration"),
                _entry(f"switches/{name}/nvue.sh", "/usr/local/sbin/fabgen-nvue.sh", "0755",
                       "the same configuration as nv set commands: run with --apply instead of startup.yaml")]
    return []


def host_install_path(host: str) -> str:
    return f"hosts/{host}/install.json"


def switch_install_path(switch: str) -> str:
    return f"switches/{switch}.install.json"


def _dump(device: str, kind: str, entries: list[Entry]) -> str:
    """JSON with one entry per line: readable, diffable, and a third of the indented size at 24k hosts."""
    head = json.dumps({"device": device, "kind": kind}, ensure_ascii=True)[:-1]
    lines = ",\n".join("    " + json.dumps(e, ensure_ascii=True) for e in entries)
    return f'{head}, "files": [\n{lines}\n]}}\n' if entries else f'{head}, "files": []}}\n'



def _render_host(context: RenderContext, host: Host) -> dict[str, str]:
    """What :func:`_dump` prints, by f-strings when every value is one ``json.dumps`` prints as itself.

    They always are (fabgen's paths, names and commands), and ``json.dumps``
    per entry was two thirds of this target's time at 24k hosts; a value outside
    the plain set (a quote, a backslash, a control or non-ASCII character) dumps
    the whole list the slow, always-right way.
    """
    entries = host_entries(context.plan, host)
    body = ",\n".join(f'    {{"source": "{e["source"]}", "dest": "{e["dest"]}", "mode": "{e["mode"]}", '
                       f'"then": "{e["then"]}"}}' for e in entries)
    if (not entries or _PLAIN_JSON.fullmatch(body) is None or body.count('"') != 16 * len(entries)
            or body.count("\n") != len(entries) - 1 or _PLAIN_JSON.fullmatch(host.name) is None
            or '"' in host.name or "\n" in host.name):
        return {host_install_path(host.name): _dump(host.name, "host", entries)}
    return {host_install_path(host.name): f'{{"device": "{host.name}", "kind": "host", "files": [\n{body}\n]}}\n'}


_PLAIN_JSON = re.compile(r"[\n !-\[\]-~]*")
"""Printable ASCII but ``\\``, and newlines: with the quotes and newlines counted (a value holding
neither), what ``json.dumps(..., ensure_ascii=True)`` prints unchanged."""


_SWITCH_SHAPES: dict[str, str | None] = {}
"""Switch OS -> its list with ``@`` for the name (None: it installs nothing)."""


def _switch_shape(os: str) -> str | None:
    """Every switch of an OS has the same list but for its name, which a safe name enters verbatim.

    A :data:`~fabgen.targets.install_check.SAFE_NAME` needs no JSON escape, so
    putting it in place of ``@`` is the text ``_dump`` writes for it, as long as
    nothing else in the list holds an ``@`` (asserted: a future entry with one
    falls back to ``_dump`` for every switch of that OS).
    """
    if os not in _SWITCH_SHAPES:
        entries = _switch_entries(os, "@")
        shape = _dump("@", "switch", entries) if entries else None
        plain = _dump("x", "switch", _switch_entries(os, "x")) if entries else None
        _SWITCH_SHAPES[os] = shape if shape is None or plain == shape.replace("@", "x") else ""
    return _SWITCH_SHAPES[os]


def _render_switch(context: RenderContext, switch: Switch) -> dict[str, str]:
    name = switch.name
    shape = _switch_shape(switch.os)
    if shape is None:
        return {}
    if shape and SAFE_NAME.fullmatch(name):
        return {f"switches/{name}.install.json": shape.replace("@", name)}
    return {switch_install_path(name): _dump(name, "switch", switch_entries(switch))}


HOST_TARGET = Target(name="install-hosts", scope="host", summary="per host install.json: each file's destination "
                     "on the host, the profile's files included", render=_render_host, check=check_install_map)
SWITCH_TARGET = Target(name="install-switches", scope="switch", summary="per switch NAME.install.json: each "
                       "file's destination on the switch", render=_render_switch, check=check_install_map)
