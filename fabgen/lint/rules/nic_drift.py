"""FG507 deployed NIC plan drift: a host's ``roce-nic.conf`` as collected, against the plan's.

Compared by what ``roce-nic.sh`` does with it (:mod:`fabgen.lint.deployed_nic`):
order, comments and spacing are not drift; each setting whose words differ is
one finding at its line, saying which DSCP, priority or traffic class changed.
A deployed word is printed only when it is a number or one of the script's
keywords (``dscp``, ``ets``...), or a word of the host's own plan (a NIC's
interface swapped with another's); any other is "another value".
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fabgen.lint.context import LintContext, plural, preview
from fabgen.lint.deployed import DeployedPair
from fabgen.lint.finding import Hit, Location
from fabgen.targets.mlx5.parse import NIC_FIELDS, NicPlan

_HINT = "install the generated roce-nic.conf again (fabgen generate) and run roce-nic.sh, or put the change in the spec"
_SAFE = re.compile(r"-|[0-9]{1,4}|dscp|pcp|ets|strict|vendor|yes|no|on|off")
"""Words that may be printed: numbers and the script's keywords. Anything else is "another value"."""
_DECIMAL = re.compile(r"[0-9]{1,10}")
"""A DCQCN value as ``roce-nic.sh`` takes it (``^[a-z_]+:[0-9]{1,10}$``)."""
_PER_INDEX = {"DSCP_PRIO": "DSCP", "PFC_EN": "priority", "PRIO_TC": "priority", "ECN_ENABLE": "priority",
              "TC_TSA": "TC", "TC_BW": "TC"}
"""Settings with one word per DSCP, priority or traffic class, and what word i stands for."""
_WHY = {"TRUST": "the NIC classifies by another field than the switches",
        "DSCP_PRIO": "RoCE or CNP packets land in another priority than the fabric's",
        "PFC_EN": "PFC pauses other priorities than the switches'",
        "PRIO_TC": "priorities map to other traffic classes", "TC_TSA": "the scheduler differs",
        "TC_BW": "the ETS shares differ", "ECN_ENABLE": "ECN marking is on for other priorities",
        "DCQCN": "congestion control is switched", "CC": "DCQCN reacts otherwise to congestion",
        "CMA_ROCE_TOS": "RDMA-CM connections send another DSCP", "TRAFFIC_CLASS": "verbs traffic sends another DSCP",
        "CMA_ROCE_MODE": "RDMA-CM uses another RoCE version", "DCBX_OS": "the switch may take the NIC's QoS over",
        "PAUSE_OFF": "global pause may stay on beside PFC"}


def nic_plan_drift(ctx: LintContext) -> Iterator[Hit]:
    """A host's deployed NIC plan (roce-nic.conf) differs from the plan.

    What it checks:
        With ``--deployed DIR``, each host's ``hosts/NAME/roce-nic.conf`` (the
        copy in ``/etc/fabgen/``) is read as ``roce-nic.sh`` reads it and
        compared with what fabgen renders for that host, setting by setting:
        trust, the DSCP-to-priority map, PFC, priority-to-TC, ETS, ECN, DCQCN
        on/off and its parameters, the RDMA-CM and verbs ToS, and each NIC's
        interface, PCI function, port, rail and MTU. A plan the script would
        refuse (a missing setting, an unknown key) is reported too: that host's
        NICs keep whatever they had.

    Why it matters:
        ``roce-nic.sh`` applies this file at every boot, so an edit here is the
        NIC's configuration from the next reboot on: a changed DSCP map or PFC
        bit makes that host's RoCE traffic lossy or paused on the wrong
        priority, while the switches and every other host stay right, and the
        job slows down or hangs on that one host.

    Example:
        # DIR/hosts/lab01/roce-nic.conf, edited on the host
        PFC_EN=0 0 0 0 0 0 0 0

    Fix:
        Install the generated ``roce-nic.conf`` again and run ``roce-nic.sh``,
        or, if the change was intended, put it in the spec.
    """
    if ctx.deployed is None:
        return
    for deployed in ctx.deployed.nic_plans:
        yield from _host(deployed)


def _host(deployed: DeployedPair[NicPlan]) -> Iterator[Hit]:
    host, found, expected = deployed.owner, deployed.found, deployed.expected
    if found is None or expected is None:
        yield Hit(f"{host}: roce-nic.conf {deployed.problem}", Location(deployed.file, 1, 1),
                  "collect the file again, or install the generated one")
        return
    if found.format != expected.format:
        yield Hit(f"{host}: roce-nic.conf has {_word(found.format, set())} for FORMAT (plan {expected.format}): "
                  "roce-nic.sh refuses it", _at(deployed, found, "FORMAT"), _HINT)
    known = {word for words in (*expected.settings.values(), *expected.nics.values()) for word in words}
    known.update(expected.nics)
    for key, want in expected.settings.items():
        have = found.settings[key]
        if have != want and (key != "CC" or _cc(have) != _cc(want)):
            yield Hit(f"{host}: roce-nic.conf {key} {_changes(key, have, want, known)}: "
                      f"{_WHY.get(key, 'it differs')}", _at(deployed, found, key), _HINT)
    for device, want in expected.nics.items():
        have_nic = found.nics.get(device)
        if have_nic is None:
            first = f"NIC {next(iter(found.nics))}"  # the script refuses a plan without NIC= lines
            yield Hit(f"{host}: roce-nic.conf lacks NIC {device}: roce-nic.sh leaves it unconfigured",
                      _at(deployed, found, first), _HINT)
        elif have_nic != want:
            yield Hit(f"{host}: roce-nic.conf NIC {device} {_nic_changes(have_nic, want, known)}",
                      _at(deployed, found, f"NIC {device}"), _HINT)
    extra = [device for device in found.nics if device not in expected.nics]
    if extra:
        # not named: a device name the plan does not have is the file's
        yield Hit(f"{host}: roce-nic.conf configures {plural(len(extra), 'NIC')} the plan does not have",
                  _at(deployed, found, f"NIC {extra[0]}"), "remove the NIC= line, or add the NIC to the spec")


def _changes(key: str, have: tuple[str, ...], want: tuple[str, ...], known: set[str]) -> str:
    """What changed in one setting: per DSCP, priority or TC where the setting has one word each, by name for
    DCQCN's parameters, else the whole value."""
    if key == "CC":
        return _cc_changes(have, want)
    what = _PER_INDEX.get(key)
    if what is None or len(have) != len(want):
        shown = " ".join(_word(w, known) for w in have) if have else "empty"
        return f"is {shown} (plan {' '.join(want) or 'empty'})"
    said = [f"{what} {i} {_word(h, known)} (plan {w})" for i, (h, w) in enumerate(zip(have, want, strict=True))
            if h != w]
    return "differs at " + preview(said, 4)


def _cc(words: tuple[str, ...]) -> dict[str, str]:
    """DCQCN parameters by name, each value as the script reads it (``10#``: a leading zero is no octal).

    Only the script's 1 to 10 ASCII digits are read as a number: longer runs it refuses, and ``int`` of a few
    thousand digits raises.
    """
    pairs = (word.partition(":") for word in words)
    return {name: str(int(value)) if _DECIMAL.fullmatch(value) else value for name, _, value in pairs}


def _cc_changes(have: tuple[str, ...], want: tuple[str, ...]) -> str:
    """Changed and missing parameters by name; extra ones counted (a name the plan lacks is the file's)."""
    mine, planned = _cc(have), _cc(want)
    said = [f"{name} {_word(mine[name], set())} (plan {value})" for name, value in planned.items()
            if name in mine and mine[name] != value]
    said += [f"no {name} (plan {value})" for name, value in planned.items() if name not in mine]
    extra = sum(1 for name in mine if name not in planned)
    if extra:
        said.append(f"{plural(extra, 'parameter')} the plan does not set")
    return "differs: " + preview(said, 4)


def _nic_changes(have: tuple[str, ...], want: tuple[str, ...], known: set[str]) -> str:
    if len(have) != len(want):
        return f"has {len(have) + 1} words (plan {len(want) + 1}): roce-nic.sh refuses it"
    said = [f"{field} {_word(h, known)} (plan {w})" for field, h, w in zip(NIC_FIELDS, have, want, strict=True)
            if h != w]
    return "has " + ", ".join(said)


def _word(word: str, known: set[str]) -> str:
    return word if word in known or _SAFE.fullmatch(word) else "another value"


def _at(deployed: DeployedPair[NicPlan], found: NicPlan, key: str) -> Location:
    return Location(deployed.file, found.lines.get(key) or found.lines.get("FORMAT", 1), 1)
