"""FG510 deployed boot drift: a host's NIC unit, udev rule and lldpd configuration as collected, against the plan's.

Compared by what systemd, udevd and lldpd take from them (:mod:`fabgen.lint.deployed_profile`), so comments, order
and spelling are not drift, and what a file adds to the plan's is left alone: only what the plan needs is checked.
A deployed value is printed only when the plan has it too or it is one of the consumer's own words.
"""

from __future__ import annotations

from collections.abc import Iterator

from fabgen.lint.context import LintContext
from fabgen.lint.deployed import DeployedPair, pair_hits
from fabgen.lint.finding import Hit
from fabgen.targets.hostnet.parse_boot import BootFile, LldpdConf, UdevRules, UnitFile, unit_true

_HINT = ("install the generated file again (then `systemctl daemon-reload`, `udevadm control --reload` or "
         "`systemctl restart lldpd`), or put the change in the spec")
_UNIT_TYPES = frozenset({"simple", "exec", "forking", "oneshot", "dbus", "notify", "notify-reload", "idle"})
_PORT_IDS = frozenset({"ifname", "macaddress", "local"})
_BOOLEANS = frozenset({"1", "0", "yes", "no", "y", "n", "true", "false", "t", "f", "on", "off"})


def boot_drift(ctx: LintContext) -> Iterator[Hit]:
    """A host's deployed NIC unit, udev rule or lldpd configuration differs from the plan.

    What it checks:
        With ``--deployed DIR``, each host's collected
        ``hosts/NAME/fabgen-roce-nic.service``, ``99-fabgen-roce-nic.rules``
        and ``lldpd.conf`` (or a profile's shared copies under
        ``hosts/_profiles/P/``), read as systemd, udevd and lldpd read them,
        against what fabgen renders for the host's profile: the unit still
        wants and waits for every backend NIC's device, runs the NIC script as
        a oneshot that stays active, before the workloads, at boot; the udev
        rule that re-runs it when the mlx5 driver adds a netdev is there; lldpd
        still speaks on every backend NIC and names ports by interface name.
        What a file adds (another ``After=``, another rule) is left alone.

    Why it matters:
        Trust, PFC and DCQCN live only as long as the netdevs do. A unit that
        no longer waits for one NIC's device may run before that netdev exists,
        and the rail comes up lossy at the next reboot; without the udev rule a
        driver reload or firmware reset leaves every NIC on the driver's
        defaults. RoCE then drops instead of pausing, and the job slows or
        hangs. An lldpd pattern that leaves a NIC out hides that NIC's cable
        from ``lint --wiring``; another port-id subtype makes every capture
        name the NIC by its MAC address instead.

    Example:
        # DIR/hosts/lab01/fabgen-roce-nic.service, edited on the host
        Wants=sys-subsystem-net-devices-ens1np0.device

    Fix:
        Install the generated files again and reload systemd, udev or lldpd,
        or, if the change was intended, put it in the spec.
    """
    if ctx.deployed is None:
        return
    for deployed in ctx.deployed.boot_files:
        yield from _file(deployed)


def _file(deployed: DeployedPair[BootFile]) -> Iterator[Hit]:
    found, expected = deployed.found, deployed.expected
    said: list[str] = []
    line = 0
    if isinstance(found, UnitFile) and isinstance(expected, UnitFile):
        said, line = _unit(found, expected)
    elif isinstance(found, UdevRules) and isinstance(expected, UdevRules):
        said, line = _udev(found, expected)
    elif isinstance(found, LldpdConf) and isinstance(expected, LldpdConf):
        said, line = _lldpd(found, expected)
    yield from pair_hits(deployed, deployed.file.rsplit("/", 1)[-1], said, line, _HINT)


def _unit(found: UnitFile, expected: UnitFile) -> tuple[list[str], int]:
    said: list[str] = []
    line = 0
    for name, want in expected.settings.items():
        key = name.partition(".")[2]
        if key == "Description" or not want:
            continue
        have = found.settings.get(name)
        before = len(said)
        if key in ("Wants", "After", "Before", "WantedBy"):
            missing = [value for value in want if value not in (have or ())]
            if missing:
                said.append(f"{key}= lacks {', '.join(missing)}")
        elif key == "ExecStart":
            if have != want:
                runs = "nothing" if not have else "another command" if want[0] not in have else \
                    f"{len(have) - 1} more command{'s' if len(have) > 2 else ''} too"
                said.append(f"ExecStart= runs {runs} (plan {want[0]})")
        elif key == "RemainAfterExit":
            if have is None or unit_true(have[0]) != unit_true(want[0]):
                shown = "unset" if have is None else have[0] if have[0].lower() in _BOOLEANS else "another value"
                said.append(f"RemainAfterExit= {shown} (plan {want[0]})")
        elif have != want:
            shown = "unset" if not have else have[0] if have[0] in _UNIT_TYPES else "another value"
            said.append(f"{key}= {shown} (plan {want[0]})")
        if len(said) > before:
            line = line or found.lines.get(name, 0)
    return said, line


def _udev(found: UdevRules, expected: UdevRules) -> tuple[list[str], int]:
    have = {parts for parts, _ in found.rules}
    said: list[str] = []
    line = 0
    for parts, _ in expected.rules:
        if parts in have:
            continue
        said.append("the rule that restarts fabgen-roce-nic.service when the mlx5 driver adds a netdev is missing "
                    "or changed")
        line = line or next((number for other, number in found.rules if other & parts), 0)
    return said, line


def _lldpd(found: LldpdConf, expected: LldpdConf) -> tuple[list[str], int]:
    said: list[str] = []
    line = 0
    planned = [netdev for netdev in (expected.pattern or "").split(",") if netdev]
    left_out = [netdev for netdev in planned if not found.admits(netdev)]
    if left_out:
        said.append(f"the interface pattern leaves out {', '.join(left_out)}")
        line = found.pattern_line
    if found.port_id != expected.port_id:
        shown = "unset (the MAC address)" if found.port_id is None else found.port_id \
            if found.port_id in _PORT_IDS else "another value"
        said.append(f"portidsubtype {shown} (plan {expected.port_id})")
        line = line or found.port_id_line
    return said, line
