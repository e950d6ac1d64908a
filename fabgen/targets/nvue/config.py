"""Cumulus Linux (NVUE) target: ``switches/NAME/startup.yaml``, ``nvue.sh`` and ``patch.yaml`` (:mod:`.patch`).

The configuration of a switch is built once, as data (:class:`NvueConfig`: the
tree under NVUE's ``set`` plus the comments that explain it), and written
twice: as ``startup.yaml`` by a small emitter of our own, and as ``nv set``
commands by a template. Both come from the same tree, so they cannot disagree;
the tests parse both back and compare them anyway.

Every QoS table is written out in full rather than switched on with
``nv set qos roce``: what the switch does then depends on the spec alone, not
on NVUE defaults that move between releases. Where the spec's policy equals the
``qos roce`` lossless default, a comment says so.

Target: the Cumulus Linux 5.x NVUE object model as spelled in 5.6 to 5.14
(``ecn enable|disable``; see :mod:`fabgen.targets.nvue.parse`). Management
(``eth0``) is not rendered: the management address belongs to the inventory.
The BGP underlay, ECMP hashing and adaptive routing are built in
:mod:`fabgen.targets.nvue.routing`; a shut port (an out-of-service NIC's) is
``link state down``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from jinja2 import Environment

from fabgen.errors import OutputError, Problem
from fabgen.plan.model import ClassIntent, QosIntent, Switch
from fabgen.targets.base import ReadBack, RenderContext, Target
from fabgen.targets.environment import shell_quote
from fabgen.targets.nvue.limits import plan_limits, queue_classes
from fabgen.targets.nvue.parse import (
    DEFAULT_POLLING_MS,
    DEFAULT_ROBUSTNESS,
    PROFILE,
    parse_nvue_qos,
)
from fabgen.targets.nvue.parse_routing import parse_nvue_routing
from fabgen.targets.nvue.patch import check_nvue_files, owned_paths, patch_path, patch_yaml, unset_lines
from fabgen.targets.nvue.routing import forwarding_section, port_routing, routing_sections
from fabgen.targets.nvue.routing_limits import ECMP
from fabgen.targets.nvue.subset import PLAIN_KEY, YAML_WORDS

SCRIPT_TEMPLATE = "nvue/nvue.sh.j2"
TRUST = {"dscp": "l3"}
"""Spec trust -> NVUE ``qos mapping ... trust``."""
LOSSLESS_POOL_PERCENT = 50
"""Buffer share of the lossless pool. PFC needs one ("Flow Control Buffers" in the
Cumulus QoS guide); 50/50 is NVIDIA's own example split."""

Path = tuple[str, ...]
Tree = dict[str, Any]


@dataclass(frozen=True)
class NvueConfig:
    """One switch's NVUE configuration: the ``set`` tree and the comments on its keys."""

    switch: str
    tree: Tree
    """Nested dicts in output order; leaves are ``int`` or ``str``, ``{}`` is NVUE's empty object."""
    notes: Mapping[Path, tuple[str, ...]]
    """Comment lines printed before the key at a path (same in both files)."""
    header: tuple[str, ...]


@dataclass(frozen=True)
class CommandBlock:
    """A run of ``nv set`` commands under one comment, as nvue.sh prints it."""

    notes: tuple[str, ...]
    commands: tuple[tuple[str, ...], ...]
    """Words after ``nv set``."""


# ---- building the tree --------------------------------------------------------


# NVUE's `qos roce` lossless defaults (Cumulus Linux user guide, "RDMA over Converged
# Ethernet - RoCE"), compared with the spec in the comments.
ROCE_DSCP_MAP = tuple(d // 8 for d in range(64))
ROCE_QUEUES = (0, 0, 0, 3, 0, 0, 6, 0)
ROCE_PFC = ((3,), 100)
ROCE_ECN = {tc: (150_000, 1_500_000, 100) for tc in (0, 3)}
ROCE_SCHEDULER = {0: ("dwrr", 50), 3: ("dwrr", 50), 6: ("strict", 0)}

Section = tuple[Path, Tree, tuple[str, ...]]
"""Where a part of the tree goes, the part, and the comment printed before it."""


def nvue_config(switch: Switch) -> NvueConfig:
    """Everything NVUE needs for one switch, from the plan alone, its words checked."""
    config = unchecked_config(switch)
    _check_words(config)
    return config


def unchecked_config(switch: Switch) -> NvueConfig:
    """:func:`nvue_config` before its word check: apart so ``bench/floor_nvue.py`` measures the bytes alone."""
    sections: list[Section] = [(("system",), {"hostname": switch.name}, ()), forwarding_section(switch)]
    sections += _qos_sections(switch.qos)
    sections.append((("interface",), _interfaces(switch), (
        "Loopback and fabric ports: description (peer:port), MTU, speed, point-to-point address"
        + (", PFC watchdog." if switch.qos.lossless_priorities else ".")
        + (" The port of an out-of-service NIC is down." if any(p.shutdown for p in switch.ports) else ""),
    )))
    sections += routing_sections(switch)
    tree: Tree = {}
    notes: dict[Path, tuple[str, ...]] = {}
    for path, body, comment in sections:
        parent = tree
        for name in path[:-1]:
            parent = parent.setdefault(name, {})
        parent[path[-1]] = body
        if comment:
            notes[path] = comment
    header = (
        f"NVUE configuration of {switch.name} ({switch.tier}, {switch.model}).",
        "Generated by fabgen from the cluster spec: change the spec, not this file.",
        "Target: Cumulus Linux 5.x NVUE object model, 5.6-5.14 spelling (enable/disable).",
        "`qos roce` is not enabled: every QoS table is written out, so nothing rests on NVUE defaults.",
    )
    return NvueConfig(switch=switch.name, tree=tree, notes=notes, header=header)


def _qos_sections(qos: QosIntent) -> list[Section]:
    """Classification, queues, buffers, PFC, ECN, scheduler and watchdog, in NVUE's default profile."""
    lossless = qos.lossless_priorities
    queues = queue_classes(qos)
    sections: list[Section] = [
        (("qos", "mapping"), {PROFILE: {
            "trust": TRUST[qos.trust],
            "dscp": {str(d): {"switch-priority": p} for d, p in enumerate(qos.dscp_to_priority)},
        }}, (
            "Classification: trust DSCP; all 64 values written out, so none falls back to NVUE's 8-block map.",
            _versus_roce(qos.dscp_to_priority, ROCE_DSCP_MAP,
                         "the 8-block map (DSCP 24-31 -> 3, 48-55 -> 6) with trust pcp,dscp"),
        )),
        (("qos", "egress-queue-mapping"), {PROFILE: {
            "switch-priority": {str(sp): {"traffic-class": tc} for sp, tc in enumerate(qos.priority_to_queue)},
        }}, (
            "Switch priority -> traffic class (egress queue).",
            _versus_roce(qos.priority_to_queue, ROCE_QUEUES, "SP 3 -> TC 3, SP 6 -> TC 6, others -> TC 0"),
        )),
    ]
    if lossless:
        sections.append((("qos", "traffic-pool"), {
            "default-lossy": {
                "memory-percent": 100 - LOSSLESS_POOL_PERCENT,
                "switch-priority": {str(sp): {} for sp in range(8) if sp not in lossless},
            },
            "default-lossless": {
                "memory-percent": LOSSLESS_POOL_PERCENT,
                "switch-priority": {str(sp): {} for sp in lossless},
            },
        }, (
            "PFC needs a lossless buffer pool; lossless switch priorities get half the buffer (NVIDIA's example).",
            "NVUE `qos roce` would use its own roce-reserved pools instead.",
        )))
        sections.append((("qos", "pfc"), {PROFILE: {
            "switch-priority": {str(sp): {} for sp in lossless},
            "tx": "enable",
            "rx": "enable",
            "cable-length": qos.cable_length_m,
        }}, (
            "PFC (no-drop) on the lossless switch priorities; cable length in metres sizes the headroom.",
            _versus_roce((lossless, qos.cable_length_m), ROCE_PFC, "PFC on switch-priority 3, cable-length 100"),
        )))
    ecn = {tc: (c.ecn_min, c.ecn_max, c.ecn_probability) for tc, c in queues if c.ecn_min is not None}
    sections.append((("qos", "congestion-control"),
                     {PROFILE: {"traffic-class": {str(tc): _ecn(c) for tc, c in queues}}}, (
        "ECN marking per traffic class (bytes, mark probability %), RED off; queues without ECN say so.",
        _versus_roce(ecn, ROCE_ECN, "ECN on TC 0 and 3 at 150000-1500000 bytes, probability 100, RED off"),
    )))
    scheduler = {tc: ("strict", 0) if c.strict else ("dwrr", c.weight) for tc, c in queues}
    sections.append((("qos", "egress-scheduler"),
                     {PROFILE: {"traffic-class": {str(tc): _scheduler(c) for tc, c in queues}}}, (
        "Egress scheduler: strict priority or DWRR percent; traffic classes no class uses get no bandwidth.",
        _versus_roce(scheduler, ROCE_SCHEDULER, "TC 6 strict, TC 0 and 3 DWRR 50% each"),
    )))
    poll, robustness, watchdog_notes = _watchdog(qos)
    sections.append((("qos", "pfc-watchdog"), {"polling-interval": poll, "robustness": robustness}, watchdog_notes))
    return sections


def _interfaces(switch: Switch) -> Tree:
    """The loopback, then every planned port in plan order."""
    qos = switch.qos
    interfaces: Tree = {"lo": {"type": "loopback", "ip": {"address": {switch.loopback: {}}}}}
    for port in switch.ports:
        body: Tree = {"type": "swp"}
        if port.description:
            body["description"] = port.description
        body["link"] = {"mtu": qos.mtu, "speed": f"{port.speed}G", "state": {"down" if port.shutdown else "up": {}}}
        if port.address:
            body["ip"] = {"address": {port.address: {}}}
        if qos.lossless_priorities:
            # NVUE allows the watchdog only on a port with PFC.
            body["qos"] = {"pfc-watchdog": {"state": "enable" if qos.watchdog.enabled else "disable"}}
        router = port_routing(switch, port)
        if router is not None:
            body["router"] = router
        interfaces[port.name] = body
    return interfaces


def _ecn(c: ClassIntent) -> Tree:
    if c.ecn_min is None:
        return {"ecn": "disable", "red": "disable"}
    return {"ecn": "enable", "min-threshold": c.ecn_min, "max-threshold": c.ecn_max,
            "probability": c.ecn_probability, "red": "disable"}


def _scheduler(c: ClassIntent) -> Tree:
    return {"mode": "strict"} if c.strict else {"mode": "dwrr", "bw-percent": c.weight}


def _watchdog(qos: QosIntent) -> tuple[int, int, tuple[str, ...]]:
    """NVUE's two watchdog knobs for the plan's watchdog, and what they cannot express.

    NVUE detects a storm after ``robustness`` polling intervals, restores the
    queue after one interval without pause frames, and always drops.
    """
    wd = qos.watchdog
    poll = wd.poll_ms
    robustness = max(1, -(-wd.detect_ms // poll))
    notes = [f"PFC watchdog: poll every {poll} ms, drop after {robustness} polls of a paused queue "
             f"({poll * robustness} ms); enabled per port below."]
    if (poll, robustness) == (DEFAULT_POLLING_MS, DEFAULT_ROBUSTNESS):
        notes.append("Equals NVUE's default watchdog (100 ms x 3); written out anyway.")
    if wd.detect_ms % poll:
        notes.append(f"Spec detect {wd.detect_ms} ms is not a multiple of the poll: NVUE acts after "
                     f"{poll * robustness} ms.")
    if wd.restore_ms != poll:
        notes.append(f"Spec restore {wd.restore_ms} ms cannot be set: NVUE restores after one quiet poll ({poll} ms).")
    if wd.action != "drop":
        notes.append(f"Spec action {wd.action!r} cannot be set: NVUE always drops.")
    return poll, robustness, tuple(notes)


def _versus_roce(ours: object, roce: object, roce_text: str) -> str:
    if ours == roce:
        return "Equals the NVUE `qos roce` lossless default; written out anyway."
    return f"NVUE `qos roce` lossless default differs: {roce_text}."


_SAFE_TEXT = re.compile(r"[\x20-\x7e]*")
_BARE_LINE = re.compile(r"[\w@%+=:,./][\w@%+=:,./-]*(?: [\w@%+=:,./][\w@%+=:,./-]*)*", re.ASCII)
"""Words joined by single spaces, each of the characters ``shlex.quote`` leaves bare and none starting with ``-``."""


def _check_words(config: NvueConfig) -> list[dict[str, Any]]:
    """Refuse any string that could leave its line or be read as an ``nv`` option; nvue.sh's blocks.

    The spec's patterns already exclude these; this guards the renderer
    against a plan built some other way. The blocks (:func:`command_blocks`)
    come back as the template prints them: each with its ``notes``, its
    ``commands`` and their ``lines``, the words after ``nv set`` each through
    :func:`~fabgen.targets.environment.shell_quote`. Why together: a command
    whose words joined by spaces are a :data:`_BARE_LINE` with one space fewer
    than words (so no word holds one) passes the word check and quotes to that
    join, ``shlex.quote`` leaving every bare word as it is; that one match
    replaces a check and a quote per word (4,000 lines a switch). Any other
    command is checked and quoted word by word.
    """
    where = f"switches/{config.switch}"
    for line in (*config.header, *(n for notes in config.notes.values() for n in notes)):
        if not _SAFE_TEXT.fullmatch(line):
            raise OutputError([Problem(f"comment {line!r} is not one line of printable ASCII", file=where)])
    return [{"notes": block.notes, "commands": block.commands,
             "lines": [_command_line(words, where) for words in block.commands]}
            for block in command_blocks(config)]


def _command_line(words: tuple[str, ...], where: str) -> str:
    """The words after ``nv set`` as nvue.sh prints them, each through ``shell_quote``, once the word check
    passed them (:func:`_check_words`; ``tests/targets/nvue/test_fits.py`` compares both ways on random words)."""
    line = " ".join(words)
    if line.count(" ") == len(words) - 1 and _BARE_LINE.fullmatch(line):
        return line
    _check_each_word(words, where)
    return " ".join(map(shell_quote, words))


def _check_each_word(words: tuple[str, ...], where: str) -> None:
    for word in words:
        if not _SAFE_TEXT.fullmatch(word):
            raise OutputError([Problem(f"{' '.join(words[:-1])}: {word!r} is not one line of printable ASCII",
                                       file=where)])
        if word.startswith("-") or word == "":
            raise OutputError([Problem(f"{' '.join(words[:-1])}: nv would not read {word!r} as a value",
                                       file=where)])


# ---- startup.yaml -------------------------------------------------------------------

_FLOW_MAX_KEYS = 6


def startup_yaml(config: NvueConfig) -> str:
    """``/etc/nvue.d/startup.yaml``: one ``- set:`` item; every string value double-quoted.

    Written by hand rather than by a YAML library so the layout (flow style for
    small leaf objects, comments before sections) is fixed and every string is
    quoted with JSON escapes, which YAML reads back unchanged.
    """
    lines = [f"# {line}" for line in config.header]
    lines.append("# Install as /etc/nvue.d/startup.yaml, or: nv config replace startup.yaml && nv config apply")
    return "\n".join(lines + set_item(config)) + "\n"


def set_item(config: NvueConfig) -> list[str]:
    """The ``- set:`` item: the whole tree with its comments (startup.yaml's body, and patch.yaml's second item)."""
    lines = ["- set:"]
    _emit(lines, config.tree, 4, (), config.notes)
    return lines


def _emit(lines: list[str], tree: Tree, indent: int, path: Path, notes: Mapping[Path, tuple[str, ...]]) -> None:
    pad = " " * indent
    for key, value in tree.items():
        here = (*path, key)
        lines.extend(f"{pad}# {note}" for note in notes.get(here, ()))
        if isinstance(value, dict) and value and not _flat(value, here, notes):
            lines.append(f"{pad}{_key(key)}:")
            _emit(lines, value, indent + 2, here, notes)
        elif isinstance(value, dict):
            lines.append(f"{pad}{_key(key)}: {_flow(value)}")
        else:
            lines.append(f"{pad}{_key(key)}: {_scalar(value)}")


def _flat(value: Tree, path: Path, notes: Mapping[Path, tuple[str, ...]]) -> bool:
    """Small objects of scalars (and ``{}``) with no comment inside print on one line."""
    if len(value) > _FLOW_MAX_KEYS or any(p[: len(path)] == path and len(p) > len(path) for p in notes):
        return False
    return all(not isinstance(v, dict) or not v for v in value.values())


def _flow(value: Tree) -> str:
    inner = ", ".join(f"{_key(k)}: {'{}' if isinstance(v, dict) else _scalar(v)}" for k, v in value.items())
    return "{" + inner + "}"


def _key(key: str) -> str:
    if PLAIN_KEY.fullmatch(key) and key.lower() not in YAML_WORDS:
        return key
    return json.dumps(key)


def _scalar(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(f"nvue: refusing {type(value).__name__} value {value!r}")
    return str(value) if isinstance(value, int) else json.dumps(value)


# ---- nvue.sh ----------------------------------------------------------------------------


def _commands(tree: Tree, path: Path = ()) -> Iterator[Path]:
    """The words after ``nv set`` for every leaf, in tree order."""
    for key, value in tree.items():
        here = (*path, key)
        if isinstance(value, dict) and value:
            yield from _commands(value, here)
        elif isinstance(value, dict):
            yield here
        else:
            yield (*here, str(value))


def command_blocks(config: NvueConfig) -> list[CommandBlock]:
    """The ``nv set`` commands grouped by section (two path levels), each with its comments."""
    blocks: list[tuple[Path, list[str], list[Path]]] = []
    seen: set[Path] = set()
    for words in _commands(config.tree):
        fresh = [p for i in range(1, len(words)) if (p := words[:i]) in config.notes and p not in seen]
        seen.update(fresh)
        group = words[:2]
        if not blocks or fresh or blocks[-1][0] != group:
            blocks.append((group, [n for p in fresh for n in config.notes[p]], []))
        blocks[-1][2].append(words)
    return [CommandBlock(tuple(n), tuple(c)) for _, n, c in blocks]


def nvue_script(config: NvueConfig, env: Environment) -> str:
    """``nvue.sh``: the same configuration as ``nv set`` commands; applies only with ``--apply``."""
    return _script(config, _check_words(config), env)


def _script(config: NvueConfig, blocks: list[dict[str, Any]], env: Environment) -> str:
    return env.get_template(SCRIPT_TEMPLATE).render(switch=config.switch, header=config.header, blocks=blocks)


# ---- the target -------------------------------------------------------------------------


def _render(context: RenderContext, switch: Switch) -> dict[str, str]:
    config = unchecked_config(switch)
    blocks = _check_words(config)
    base = f"switches/{switch.name}"
    return {
        f"{base}/startup.yaml": startup_yaml(config),
        f"{base}/nvue.sh": _script(config, blocks, context.env),
        patch_path(switch.name): patch_yaml(config.header, unset_lines(owned_paths(config.tree), _key),
                                            set_item(config)),
    }


TARGET = Target(
    name="nvue",
    scope="switch",
    summary="Cumulus Linux NVUE startup.yaml and the same config as nv set commands: QoS, interfaces, BGP, "
            "ECMP hash, adaptive routing",
    render=_render,
    applies=lambda switch: switch.os == "cumulus",
    check=check_nvue_files,
    read_back=ReadBack("cumulus", "switches/{name}/startup.yaml", parse_nvue_qos, "text", parse_nvue_routing),
    limits=plan_limits,
    layout_limits=ECMP.layout_problems,
)
