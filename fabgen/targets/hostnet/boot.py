"""``host-boot``: a profile's systemd unit, udev rule and lldpd config for the backend NICs.

Per profile, not per host: they name only the profile's netdevs, which every
host of the profile shares (24k hosts would otherwise carry 24k copies). The
install map (:mod:`fabgen.targets.install`) puts them on each host.
"""

from __future__ import annotations

import re

from fabgen.errors import Problem
from fabgen.targets.base import RenderContext, Target

UNIT_NAME = "fabgen-roce-nic.service"
UNIT_DEST = f"/etc/systemd/system/{UNIT_NAME}"
UDEV_DEST = "/etc/udev/rules.d/99-fabgen-roce-nic.rules"
"""99: after 80-net-setup-link has renamed the netdev."""
LLDPD_DEST = "/etc/lldpd.d/fabgen.conf"
NIC_SCRIPT_DEST = "/usr/local/sbin/roce-nic.sh"
NIC_PLAN_DEST = "/etc/fabgen/roce-nic.conf"
"""The host's own plan file, which the shared script reads (``--plan``)."""
WORKLOADS = ("slurmd.service", "kubelet.service", "nvidia-fabricmanager.service")
"""Started after the NIC settings when present; ``Before=`` on an absent unit is a no-op."""


def unit_path(profile: str) -> str:
    return f"hosts/_profiles/{profile}/{UNIT_NAME}"


def udev_path(profile: str) -> str:
    return f"hosts/_profiles/{profile}/99-fabgen-roce-nic.rules"


def lldpd_path(profile: str) -> str:
    return f"hosts/_profiles/{profile}/lldpd.conf"


_UNIT_SAFE = re.compile(r"[A-Za-z0-9:_.]")


def device_unit(netdev: str) -> str:
    """``systemd-escape --path --suffix=device /sys/subsystem/net/devices/NETDEV``."""
    path = f"sys/subsystem/net/devices/{netdev}"
    escaped = "".join("-" if ch == "/" else ch if _UNIT_SAFE.match(ch) else f"\\x{ord(ch):02x}" for ch in path)
    return f"{escaped}.device"


def render_boot_files(cluster: str, profile: str, netdevs: list[str], context: RenderContext) -> dict[str, str]:
    if not netdevs:
        return {}
    env = context.env
    common = {"cluster": cluster, "profile": profile}
    return {
        unit_path(profile): env.get_template("host-net/fabgen-roce-nic.service.j2").render(
            dest=UNIT_DEST, udev_dest=UDEV_DEST, script=NIC_SCRIPT_DEST, plan=NIC_PLAN_DEST, devices=[device_unit(n) for n in netdevs],
            before=WORKLOADS, **common),
        udev_path(profile): env.get_template("host-net/udev.rules.j2").render(dest=UDEV_DEST, **common),
        lldpd_path(profile): env.get_template("host-net/lldpd.conf.j2").render(
            dest=LLDPD_DEST, pattern=",".join(netdevs), **common),
    }


def _render(context: RenderContext, profile: str) -> dict[str, str]:
    spec = context.plan.spec
    netdevs = [n.netdev for n in spec.host_profiles[profile].backend_nics()]
    return render_boot_files(spec.cluster.name, profile, netdevs, context)


_UNIT_LINE = re.compile(r"^(?:\[(Unit|Service|Install)\]|(Description|Wants|After|Before|Type|RemainAfterExit|ExecStart|"
                        r"WantedBy)=([^\s].*))$")
_UDEV_LINE = re.compile(r'^ACTION=="add", SUBSYSTEM=="net", DRIVERS=="mlx5_core", '
                        r'RUN\+="/usr/bin/systemctl --no-block restart fabgen-roce-nic\.service"$')
_LLDPD_LINE = re.compile(r"^configure (?:system interface pattern [A-Za-z0-9_.,-]{1,1000}|lldp portidsubtype ifname)$")


def boot_problems(path: str, text: str) -> list[Problem]:
    """Every line is a comment, blank, or one of the few directives we write (no continuation, no specifier)."""
    pattern = (_UNIT_LINE if path.endswith(".service") else _UDEV_LINE if path.endswith(".rules") else _LLDPD_LINE)
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        if not pattern.match(line) or line.endswith("\\") or ("%" in line and path.endswith(".service")):
            problems.append(Problem(f"unexpected line {line!r}", file=path, line=number))
    return problems


TARGET = Target(
    name="host-boot",
    scope="profile",
    summary="per-profile systemd unit and udev rule that run roce-nic.sh at boot and driver reload, plus lldpd config",
    render=_render,
    check=boot_problems,
)
