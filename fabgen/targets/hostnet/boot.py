"""``host-boot``: a profile's systemd unit, udev rule and lldpd config for the backend NICs.

Per profile, not per host: they name only the profile's netdevs, which every
host of the profile shares (24k hosts would otherwise carry 24k copies). The
install map (:mod:`fabgen.targets.install`) puts them on each host.
"""

from __future__ import annotations

import re
import string

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


_UNIT_SAFE = string.ascii_letters + string.digits + ":_."
_UNIT_ESCAPES = {byte: "-" if byte == ord("/") else chr(byte) if chr(byte) in _UNIT_SAFE else f"\\x{byte:02x}"
                 for byte in range(256)}
"""systemd's escape of one byte of a path: ``/`` becomes ``-``, any byte outside its safe set ``\\xNN``."""


def device_unit(netdev: str) -> str:
    """``systemd-escape --path --suffix=device /sys/subsystem/net/devices/NETDEV``.

    systemd escapes the UTF-8 bytes, so the name is translated byte by byte
    (as Latin-1 characters, one per byte); the fixed prefix needs no escape.
    """
    return f"sys-subsystem-net-devices-{netdev.encode().decode('latin-1').translate(_UNIT_ESCAPES)}.device"


def render_boot_files(cluster: str, profile: str, netdevs: list[str], context: RenderContext) -> dict[str, str]:
    if not netdevs:
        return {}
    env = context.env
    common = {"cluster": cluster, "profile": profile}
    return {
        unit_path(profile): env.get_template("host-net/fabgen-roce-nic.service.j2").render(
            dest=UNIT_DEST, udev_dest=UDEV_DEST, script=NIC_SCRIPT_DEST, plan=NIC_PLAN_DEST, devices=[device_unit(n) for n in netdevs],
            before=" ".join(WORKLOADS), **common),
        udev_path(profile): env.get_template("host-net/udev.rules.j2").render(dest=UDEV_DEST, **common),
        lldpd_path(profile): env.get_template("host-net/lldpd.conf.j2").render(
            dest=LLDPD_DEST, pattern=",".join(netdevs), **common),
    }


def _render(context: RenderContext, profile: str) -> dict[str, str]:
    spec = context.plan.spec
    netdevs = [n.netdev for n in spec.host_profiles[profile].backend_nics()]
    return render_boot_files(spec.cluster.name, profile, netdevs, context)


_UNIT_SECTIONS = frozenset({"[Unit]", "[Service]", "[Install]"})
_UNIT_KEYS = frozenset({"Description", "Wants", "After", "Before", "Type", "RemainAfterExit", "ExecStart", "WantedBy"})
_UDEV_LINE = ('ACTION=="add", SUBSYSTEM=="net", DRIVERS=="mlx5_core", '
              'RUN+="/usr/bin/systemctl --no-block restart fabgen-roce-nic.service"')
_LLDPD_IFNAME = "configure lldp portidsubtype ifname"
_LLDPD_PATTERN = "configure system interface pattern "
_PATTERN_CHARS = string.ascii_letters + string.digits + "_.,-"
"""What a netdev name in lldpd's interface pattern may hold; the whole-text proof's character class is built from
this string, so the two tests of a pattern line cannot drift apart."""
_PATTERN_CLASS = "[" + "".join(map(re.escape, _PATTERN_CHARS)) + "]"


def _unit_line(line: str) -> bool:
    """A section header, or ``Key=value`` for one of our keys, the value not starting with white space,
    no ``%`` specifier and no continuation."""
    if line in _UNIT_SECTIONS:
        return True
    key, sep, value = line.partition("=")
    return (key in _UNIT_KEYS and sep == "=" and value != "" and not value[0].isspace() and "%" not in line
            and line[-1] != "\\")


def _udev_line(line: str) -> bool:
    return line == _UDEV_LINE


def _lldpd_line(line: str) -> bool:
    """The ``portidsubtype`` line, or the pattern line listing 1 to 1,000 netdev-name characters."""
    if line == _LLDPD_IFNAME:
        return True
    pattern = line[len(_LLDPD_PATTERN):]
    return (line.startswith(_LLDPD_PATTERN) and 0 < len(pattern) <= 1000
            and not pattern.strip(_PATTERN_CHARS))


_BREAKS = "\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029"
"""Where ``str.splitlines`` cuts: a file with no other of these than newlines has the lines ``split`` at newlines
gives."""


def _whole(directive: str, breaks: str) -> re.Pattern[str]:
    """Every line blank, a comment or ``directive``; a comment holds none of ``breaks``."""
    line = f"(?:#[^{breaks}]*|{directive})?"
    return re.compile(f"(?:{line}\n)*{line}")


def _proofs(directive: str, plain_directive: str | None = None) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A file kind's two whole-text proofs: ``(plain, full)``.

    The full one is for any text. The plain one is for a text :func:`_plain`
    admits: the only break there is a newline and no value holds ``%`` or ends
    in a backslash, so ``[^\\n]`` says what the long classes say, and the engine
    runs it as its fastest loop (the classes cost about 30 ns a character, most
    of the check). ``plain_directive`` is the directive's own short spelling,
    where it has one. ``test_host_boot_check.py`` shows each pair agrees.
    """
    return _whole(plain_directive or directive, "\n"), _whole(directive, _BREAKS)


_UNIT_SECTION_OR_KEY = r"\[(?:Unit|Service|Install)\]|(?:" + "|".join(sorted(_UNIT_KEYS)) + ")="
_UNIT_PROOFS = _proofs(rf"{_UNIT_SECTION_OR_KEY}(?:[^\s%\\]|[^\s%][^%{_BREAKS}]*[^%\\{_BREAKS}])", rf"{_UNIT_SECTION_OR_KEY}\S[^\n]*")
_UDEV_PROOFS = _proofs(re.escape(_UDEV_LINE))
_LLDPD_PROOFS = _proofs(f"{re.escape(_LLDPD_IFNAME)}|{re.escape(_LLDPD_PATTERN)}{_PATTERN_CLASS}{{1,1000}}")

_NOT_PLAIN = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "%", "\\")
"""What a *plain* text lacks, besides anything not ASCII: any line break but newline, any ``%`` or backslash.
Looked for one by one with ``in`` (a fast scan each; one regular expression's search took longer than the proof)."""


def _plain(text: str) -> bool:
    return text.isascii() and not any(map(text.__contains__, _NOT_PLAIN))


def boot_problems(path: str, text: str) -> list[Problem]:
    """Every line is a comment, blank, or one of the few directives we write (no continuation, no specifier).

    A file that is clean is proved so by one regular expression over the whole text (a loop over its lines
    cost as much as rendering it); any other is judged line by line with plain string tests, which locate
    the lines at fault. ``test_host_boot_check.py`` shows both accept and refuse exactly what the per-line
    regular expressions they replace did, on planted and random lines.
    """
    service, rules = path.endswith(".service"), path.endswith(".rules")
    plain, full = _UNIT_PROOFS if service else _UDEV_PROOFS if rules else _LLDPD_PROOFS
    if (plain if _plain(text) else full).fullmatch(text):
        return []
    good = _unit_line if service else _udev_line if rules else _lldpd_line
    return [Problem(f"unexpected line {line!r}", file=path, line=number)
            for number, line in enumerate(text.splitlines(), 1)
            if line and line[0] != "#" and not good(line)]


TARGET = Target(
    name="host-boot",
    scope="profile",
    summary="per-profile systemd unit and udev rule that run roce-nic.sh at boot and driver reload, plus lldpd config",
    render=_render,
    check=boot_problems,
)
