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
from collections.abc import Sequence

from fabgen.errors import Problem
from fabgen.plan.host_intents import topology_file_path
from fabgen.plan.model import FabricPlan, Host, Switch
from fabgen.targets.base import RenderContext, Rendered, Target
from fabgen.targets.hostnet import boot
from fabgen.targets.hostnet import config as hostnet
from fabgen.targets.install_check import SAFE_NAME, all_safe, passes_for_every_safe_name, shape_passed
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
    text = _host_text(host.name, entries)
    if (not entries or _PLAIN_JSON.fullmatch(text) is None or text.count('"') != 16 * len(entries) + 10
            or text.count("\n") != len(entries) + 2 or '"' in host.name or "\n" in host.name):
        return {host_install_path(host.name): _dump(host.name, "host", entries)}
    return {host_install_path(host.name): text}


def _host_text(name: str, entries: list[Entry]) -> str:
    body = ",\n".join(f'    {{"source": "{e["source"]}", "dest": "{e["dest"]}", "mode": "{e["mode"]}", '
                       f'"then": "{e["then"]}"}}' for e in entries)
    return f'{{"device": "{name}", "kind": "host", "files": [\n{body}\n]}}\n'


_HOST_SHAPES: dict[str, int] = {}
"""Host list shapes (``@`` for the name) proved for every safe name -> their entry count (see :func:`_render_hosts`)."""


def _render_hosts(context: RenderContext, pairs: Sequence[tuple[str, Host]]) -> tuple[list[Rendered], list[Problem]] | None:
    """``render_many`` of ``install-hosts``: :func:`_render_host` and :func:`check_install_map` of each, by shape.

    The hosts of one profile print one list but for their name. A shape is
    admitted (:data:`_HOST_SHAPES`) once one host's f-string text of it is what
    :func:`_dump` prints (:func:`_render_host`'s test) and passes the check for
    every safe name (:func:`~fabgen.targets.install_check.passes_for_every_safe_name`).
    A later safe-named host whose text is that shape with its name for ``@``
    (compared with the last host's shape first: a join and a compare, where
    a lookup replaces and hashes the whole text), with as many entries, is the
    same text but for a safe name: its values hold
    no quote or newline (the counts are the shape's), no backslash, control or
    non-ASCII character (none in the shape, none in a safe name), so it too is
    what ``_dump`` prints, and it passes the check. Anything else goes the
    per-host way, checked in full. ``tests/targets/test_install_many.py`` plants
    faults and compares with the per-host path.
    """
    if not all_safe([name for name, _ in pairs]):
        return None
    plan = context.plan
    rows: list[Rendered] = []
    problems: list[Problem] = []
    last: tuple[list[str], int] = ([], -1)  # the last host's proved shape, split at "@", and its entry count
    for name, host in pairs:
        entries = host_entries(plan, host)
        text = _host_text(name, entries)
        path = f"hosts/{name}/install.json"
        if len(entries) != last[1] or text != name.join(last[0]):  # not the last host's shape: look it up
            shape = text.replace(name, "@") if "@" not in text else None
            if shape is None or _HOST_SHAPES.get(shape) != len(entries):
                text = _render_host(context, host)[path]
                found = check_install_map(path, text)
                problems.extend(found)
                if (shape is None or found or text != shape.replace("@", name) or len(_HOST_SHAPES) >= 4096
                        or not passes_for_every_safe_name(shape, path, name)):
                    rows.append((path, text, (HOST_TARGET_NAME, name)))
                    continue
                _HOST_SHAPES[shape] = len(entries)
            last = (shape.split("@"), len(entries))
        rows.append((path, text, (HOST_TARGET_NAME, name)))
    return rows, problems


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


def _render_switches(context: RenderContext,
                     pairs: Sequence[tuple[str, Switch]]) -> tuple[list[Rendered], list[Problem]] | None:
    """``render_many`` of ``install-switches``: :func:`_render_switch` of each, checked once per OS shape.

    Every list is its OS's shape with a safe name for ``@``, so one full check
    of the shape (:func:`~fabgen.targets.install_check.passes_for_every_safe_name`)
    is the verdict :func:`check_install_map` gives each copy. A shape that
    fails, or an unsafe name, sends the batch the per-switch way, checked in
    full (``tests/targets/test_install_many.py`` plants both).

    Once every OS of a batch has a proved shape (:data:`_PROVED_PARTS`, from
    an earlier batch, still passed), the batch is one pass: the names' safety, then each
    switch's OS looked up as its list is joined (no set of the batch's OSes
    first, no shape checked again). An OS not proved yet, or one that installs
    nothing, takes the path that proves it.
    """
    names = [name for name, _ in pairs]
    if not all_safe(names):
        return None
    proved = {os: parts for os, (shape, parts) in _PROVED_PARTS.items() if shape_passed(shape)}
    try:  # name.join(parts) is shape.replace("@", name), in a third of the time
        return [(f"switches/{name}.install.json", name.join(proved[switch.os]), (SWITCH_TARGET_NAME, name))
                for name, switch in pairs], []
    except KeyError:
        pass
    shapes = {os: _switch_shape(os) for os in {switch.os for _, switch in pairs}}
    if not all(shape is None or (shape and passes_for_every_safe_name(
            shape, switch_install_path(names[0]), names[0])) for shape in shapes.values()):
        return None
    parts = {os: shape.split("@") for os, shape in shapes.items() if shape is not None}
    _PROVED_PARTS.update((os, (shape, parts[os])) for os, shape in shapes.items() if shape is not None)
    return [(f"switches/{name}.install.json", name.join(parts[switch.os]), (SWITCH_TARGET_NAME, name))
            for name, switch in pairs if switch.os in parts], []


_PROVED_PARTS: dict[str, tuple[str, list[str]]] = {}
"""Switch OS -> its list's shape and the shape split at ``@``, once :func:`passes_for_every_safe_name` admitted it;
used while the check still holds the shape as passed (:func:`~fabgen.targets.install_check.shape_passed`)."""


HOST_TARGET_NAME, SWITCH_TARGET_NAME = "install-hosts", "install-switches"
HOST_TARGET = Target(name=HOST_TARGET_NAME, scope="host", summary="per host install.json: each file's destination "
                     "on the host, the profile's files included", render=_render_host, check=check_install_map,
                     render_many=_render_hosts)
SWITCH_TARGET = Target(name=SWITCH_TARGET_NAME, scope="switch", summary="per switch NAME.install.json: each "
                       "file's destination on the switch", render=_render_switch, check=check_install_map,
                       render_many=_render_switches)
