"""``switches/NAME.session``: the EOS configuration session that replaces only fabgen's sections.

Why a session and not the ``.cfg`` as a whole: ``configure replace`` (or
``copy FILE startup-config`` and a reload) makes the file the entire
configuration, and fabgen's file has no users, AAA, SNMP, management VRF or
anything else an operator set, so those would be erased. ``rollback
clean-config`` inside a session is no better: it resets the session to the
factory default before the file is entered, which erases the same things.
``configure session`` instead starts from a copy of the running config (Arista
EOS manual, "Configure Session"), so what fabgen does not write stays exactly as
it is. Inside it, each section fabgen owns is first reset (``no`` of a block
fabgen names, ``default interface`` of a port fabgen configures), then
written again from the ``.cfg``; a line an earlier fabgen run wrote and this
one does not is therefore gone, not left behind. Nothing reaches the running
config until the session is committed, and EOS commits the difference only: a
port or BGP session whose lines come back unchanged is not touched.

What is reset, and why only that:

* ``no qos profile NAME`` and ``no platform trident mmu queue profile NAME``:
  fabgen names these (``FABGEN-*``), so nobody else's profile can match;
* ``default interface NAME`` for each fabric port and ``Loopback0``: fabgen
  writes every line those interfaces carry. Ports fabgen does not configure
  are never named, so they keep their configuration;
* ``no router bgp``: fabgen writes the whole underlay instance (EOS has one);
* the management interface is *not* defaulted: an operator's ``vrf``, ACL or
  second address on it must survive, so only fabgen's ``ip address`` is set;
* global lines (``qos map``, watchdog defaults, ``hostname``, ``ip routing``,
  DLB) are simply entered again: each replaces its own previous value, and
  fabgen maps all 64 DSCPs, so no stale DSCP mapping survives.

How to run it and commit (the file's own comments say the same): feed it to the
CLI (paste it, or send its lines as one eAPI ``runCmds`` list); it ends inside
the session after ``show session-config diffs``, uncommitted. Then ``configure
session NAME`` and ``commit timer 00:10:00`` applies it with an automatic
rollback unless ``configure session NAME commit`` confirms it in time;
``configure session NAME abort`` discards it.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

from fabgen.encoded import remember_encoded
from fabgen.errors import Problem
from fabgen.targets.eos.syntax import SyntaxIssue, _lexical, _text_issue, checked_text

if TYPE_CHECKING:  # annotations only: the cached one-device path re-runs check_session without Jinja2
    from jinja2 import Environment

TEMPLATE = "eos/session.j2"
BEGIN = "configure session "
REVIEW = "show session-config diffs"
_RESETS: tuple[tuple[re.Pattern[str], str | None], ...] = (
    (re.compile(r"no (qos profile \S+)"), None),
    (re.compile(r"no (platform trident mmu queue profile \S+)"), None),
    (re.compile(r"default (interface \S+)"), None),
    (re.compile(r"no router bgp"), "router bgp "),
)
"""Every line a session's prologue may hold, and the header of the section it resets: the line's first group
(None), or a fixed prefix (BGP)."""


def session_path(name: str) -> str:
    return f"switches/{name}.session"


def session_name(cfg: str) -> str:
    """``fabgen-`` and 12 hex of the config: a rerun of the same config reuses the name, another one does not.

    The config's bytes and whole digest are left for the writer (:mod:`fabgen.encoded`), which would otherwise
    encode and hash the same ``.cfg`` again for the manifest."""
    data = cfg.encode()
    digest = hashlib.sha256(data).hexdigest()
    remember_encoded(cfg, data, digest)
    return "fabgen-" + digest[:12]


def resets(qos_profiles: list[str], mmu_profile: str | None, interfaces: list[str], bgp: bool) -> list[str]:
    """The prologue: each section fabgen owns (by name), reset before the body writes it again."""
    lines = [f"no qos profile {name}" for name in qos_profiles]
    if mmu_profile:
        lines.append(f"no platform trident mmu queue profile {mmu_profile}")
    lines += [f"default interface {name}" for name in interfaces]
    if bgp:
        lines.append("no router bgp")
    return lines


def config_body(cfg: str) -> str:
    """The ``.cfg`` without its final ``end``: inside a session, ``end`` would leave before the review."""
    body, _, tail = cfg.rstrip("\n").rpartition("\n")
    if tail != "end":
        raise ValueError("an EOS config ends with 'end'")
    return body + "\n"


def render_session_parts(env: Environment, title: str, name: str, prologue: list[str], body: str) -> str:
    """The text of ``switches/NAME.session``: the session ``name`` (:func:`session_name` of the .cfg),
    ``prologue`` (from :func:`resets`), then the config's ``body`` (:func:`config_body`)."""
    return env.get_template(TEMPLATE).render(title=title, name=name, resets=prologue, body=body)


def split_session(text: str) -> tuple[str, list[str], str]:
    """(session name, prologue lines, body with ``end`` restored) of a session file.

    Raises ValueError when the file is not in the form :func:`render_session_parts` writes.
    """
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(BEGIN)), None)
    if start is None:
        raise ValueError(f"no '{BEGIN}NAME' line")
    name = lines[start][len(BEGIN):]
    prologue: list[str] = []
    index = start + 1
    while index < len(lines) and any(r.fullmatch(lines[index]) for r, _ in _RESETS):
        prologue.append(lines[index])
        index += 1
    try:
        review = len(lines) - 1 - lines[::-1].index(REVIEW)
    except ValueError:
        raise ValueError(f"no '{REVIEW}' line") from None
    return name, prologue, "\n".join([*lines[index:review], "end"]) + "\n"


def check_session(path: str, text: str) -> list[Problem]:
    """The body against the EOS grammar; every prologue line resets a section the body writes again."""
    try:
        name, prologue, body = split_session(text)
    except ValueError as error:
        return [Problem(f"not a fabgen EOS session file: {error}", file=path)]
    problems: list[Problem] = []
    if not re.fullmatch(r"fabgen-[0-9a-f]{12}", name):
        problems.append(Problem(f"session name {name!r} is not fabgen-<12 hex>", file=path))
    offset = text.splitlines().index(BEGIN + name) + 1 + len(prologue)
    last = body.count("\n") - 1  # the restored 'end' is not in the file
    problems += [Problem(i.message, file=path, line=i.line + offset, col=i.col) for i in checked_text(body)
                 if i.line <= last]
    problems += _around_problems(path, text)
    headers = {line for line in body.splitlines() if not line.startswith((" ", "!"))}
    for line in prologue:
        if line.startswith("default interface Management"):
            problems.append(Problem(f"'{line}' would erase an operator's vrf and ACLs on the management port",
                                    file=path))
            continue
        section = next(m[1] if header is None else header for r, header in _RESETS if (m := r.fullmatch(line)))
        if section not in headers and not (section.endswith(" ") and any(h.startswith(section) for h in headers)):
            problems.append(Problem(f"'{line}' resets a section the session does not write again", file=path))
    return problems


def _around_problems(path: str, text: str) -> list[Problem]:
    """The session's own lines before ``configure session`` and after the review: ``! text`` comments, then
    ``end`` last; each one lexically clean (printable ASCII, no trailing space), as the body's lines are."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(BEGIN))
    review = len(lines) - 1 - lines[::-1].index(REVIEW)
    problems = []
    for index in [*range(start), *range(review + 1, len(lines))]:
        line, number = lines[index], index + 1
        issue = _lexical(number, line)
        if issue is None and not (line == "end" and index == len(lines) - 1):
            issue = (_text_issue(number, 3, line[2:]) if line.startswith("! ") else
                     SyntaxIssue(number, 1, "a session's own lines are '! text' comments and a final 'end'"))
        if issue is not None:
            problems.append(Problem(issue.message, file=path, line=issue.line, col=issue.col))
    return problems
