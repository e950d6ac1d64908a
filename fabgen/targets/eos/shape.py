"""The shape of an EOS text: its per-switch values renamed canonically, so a fleet's configs share a few shapes.

Why: 2,048 leaves differ only in their hostname, addresses, ASNs,
descriptions and session name; every other byte is the same. The full check
(:mod:`fabgen.targets.eos.syntax`, :mod:`fabgen.targets.eos.session`) walks
every line in Python, so running it on each switch costs milliseconds. Here a
text is first reduced to its *shape* by a few C-level regex passes (split,
rename, join), and the full check runs once per distinct shape; a shape the
check passes means every text of that shape passes. A shape that fails sends
the real text through the full check, so problems are always reported with the
real text's line, column and message.

Why a shape's verdict is the text's: each pass renames the tokens of one type,
and only tokens its pattern proves valid wherever the grammar can put them
(the :data:`fabgen.targets.eos.syntax.STRICT` subsets), to canonical tokens of
the same type and validity. The renaming is one-to-one per text (the k-th
distinct value becomes the k-th canonical one), so the equalities the block
rules test (a neighbour without ``remote-as``, a line repeated, BFD timers
without ``bfd``) are the same in the shape; what else a rule reads of a value
is kept: the ``/31`` or ``/32`` after an address, the parity of an address's
last octet (a ``/31`` network has it even), the length class of a prefix.
A token a pass cannot prove valid stays as it is, so the full check on the
shape sees it and fails, as it would on the text. Renamed tokens hold no
space, control character or newline, so lexical and indentation checks see
the same lines. A description holding ``bfd`` stays as it is: the BGP rule
reads that word in a neighbour's line.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from fabgen.targets.memo import remember

OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
IP = rf"(?:{OCTET}\.){{3}}{OCTET}"
ASN = (r"(?:[1-9][0-9]{0,8}|[1-3][0-9]{9}|4[01][0-9]{8}|42[0-8][0-9]{7}|429[0-3][0-9]{6}|4294[0-8][0-9]{5}"
        r"|42949[0-5][0-9]{4}|429496[0-6][0-9]{3}|4294967[01][0-9]{2}|42949672[0-8][0-9]|429496729[0-5])")
"""1-4294967295, no leading zero: every AS number EOS takes (asplain)."""
TEXT = r"(?![^\n]*bfd)[!->@-~](?:[ ->@-~]{0,238}[!->@-~])?"
"""Printable ASCII without '?', 1-240 characters, no space at either end: a valid ``{text}``; not holding ``bfd``."""


def _ip(n: int) -> str:
    return f"10.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"


Canon = Callable[[list[str]], list[str]]
"""The canonical tokens for a text's distinct values of one type, in order of first appearance."""


def _numbered(make: Callable[[int], str]) -> Canon:
    """The k-th distinct value becomes ``make(k)`` (made once, kept)."""
    made: list[str] = []

    def canon(distinct: list[str]) -> list[str]:
        while len(made) < len(distinct):
            made.append(make(len(made)))
        return made[:len(distinct)]

    return canon


def _network(distinct: list[str]) -> list[str]:
    """Keeps the parity of the last octet: a /31 network with an odd one has host bits set."""
    return [_ip(2 * k + (int(token.rpartition(".")[2]) & 1)) for k, token in enumerate(distinct)]


def _subnet(distinct: list[str]) -> list[str]:
    """``a.b.c.d/len`` (len 0-30): a valid one becomes host 1 of the k-th /len of 11.0.0.0/8; others stay."""
    out = []
    for k, token in enumerate(distinct):
        address, _, length = token.partition("/")
        size = 32 - int(length)
        host = int.from_bytes(bytes(int(o) for o in address.split(".")), "big") & ((1 << size) - 1)
        if size <= 23 and k < 1 << (23 - size) and host not in (0, (1 << size) - 1):
            value = (k << size) | 1
            token = f"11.{(value >> 16) & 255}.{(value >> 8) & 255}.{value & 255}/{length}"
        out.append(token)
    return out


Pass = tuple[re.Pattern[str], Canon, str, str, int]


def _passes(*rows: tuple[str, Canon, str, str, int]) -> tuple[Pass, ...]:
    """Compiled rows: (pattern, canonical tokens, start anchor, end anchor, most matches or 0 for all).

    A pattern of one group is a literal (its value's context before, which the
    pass writes back), the value, and a lookahead; one of three groups holds the
    context before, the value and the context after. A pass reads the text from the first place its start anchor
    stands to the first place of its end anchor after that ("" for the whole
    text, an anchor not found for its end).
    """
    return tuple((re.compile(pattern), *rest) for pattern, *rest in rows)  # type: ignore[misc]


BGP = "router bgp "
"""Where a config's BGP block can begin at the earliest: neighbour lines before it are refused by the grammar."""
PORTS = "\ninterface "
CONFIG_PASSES = _passes(
    (rf"description ({TEXT})(?=\n)", _numbered(lambda k: f"t{k}"), PORTS, "", 0),  # a port's or a neighbour's
    (rf"(!!? )({TEXT})(\n)", _numbered(lambda k: f"c{k}"), "", PORTS, 0),  # comments, all above the ports
    (r"\nhostname ([A-Za-z0-9][A-Za-z0-9._-]{0,63})(?=\n)", _numbered(lambda k: f"h{k}"), "", "", 1),
    (rf"ip address ({IP})(?=/3[12]\n)", _numbered(_ip), PORTS, BGP, 0),
    (rf"ip address ({IP}/(?:[0-9]|[12][0-9]|30))(?=\n)", _subnet, "\ninterface Management", BGP, 0),
    (rf"\nrouter bgp ({ASN})(?=\n)", _numbered(lambda k: str(k + 1)), "\nrouter bgp ", "", 1),
    (rf" remote-as ({ASN})(?=\n)", _numbered(lambda k: str(k + 1)), BGP, "", 0),
    (rf"neighbor ({IP})(?= )", _numbered(_ip), BGP, "", 0),
    (rf"router-id ({IP})(?=\n)", _numbered(_ip), BGP, "", 1),
    (rf"network ({IP})(?=/3[12]\n)", _network, BGP, "", 0),
)
"""Each pass renames one type of per-switch value in the contexts the grammar reads it in.

Why per context and not per type: values of different contexts are never compared
by a rule except through a repeated line (and a false repeat only fails the
shape, which sends the text through the full check). The one comparison that
must be exact is the neighbour address of the BGP rules, and every neighbour
line the grammar accepts stands in a ``router bgp`` block and puts the address
right after ``neighbor ``, so one pass from the first ``router bgp `` renames
all of them alike. A value a pass does not reach (outside its anchor's part)
stays as it is, which can only make a shape differ, never pass.
"""
NAME_PASS: Pass = (re.compile(r" (fabgen-[0-9a-f]{12})(?=[ \n])"), _numbered(lambda k: f"fabgen-{k:012x}"), "", "", 0)
SESSION_PASSES = (NAME_PASS, *CONFIG_PASSES)
"""A whole session: its own lines add its name (its check: ``fabgen-`` and 12 hex)."""
AROUND_PASSES = (NAME_PASS, (CONFIG_PASSES[1][0], CONFIG_PASSES[1][1], "", "", 0))
"""The session's lines around its config (comments, its name, resets), when they hold no ``neighbor``."""


_LITERAL = {pattern: pattern.pattern.partition("(")[0].replace("\\n", "\n")
            for pattern, *_ in (NAME_PASS, *CONFIG_PASSES) if pattern.groups == 1}
"""The literal a one-group pattern starts with (the context its split drops)."""


def shape(text: str, passes: tuple[Pass, ...] = CONFIG_PASSES) -> str:
    """``text`` with its per-switch values renamed canonically (see the module's docstring)."""
    for pattern, canon, begin, until, most in passes:
        start = text.find(begin) if begin else 0
        if start < 0:
            continue
        end = text.find(until, start) if until else -1
        end = len(text) if end < 0 else end
        parts = pattern.split(text[start:end], most)
        if len(parts) == 1:
            continue
        parts[0] = text[:start] + parts[0]
        parts[-1] += text[end:]
        if pattern.groups == 1:  # fewer parts per match: the literal before the value is put back with it
            tokens = parts[1::2]
            before = _LITERAL[pattern]
            distinct = list(dict.fromkeys(tokens))
            mapping = dict(zip(distinct, [before + c for c in canon(distinct)], strict=True))
            parts[1::2] = map(mapping.__getitem__, tokens)
        else:
            tokens = parts[2::4]
            distinct = list(dict.fromkeys(tokens))
            mapping = dict(zip(distinct, canon(distinct), strict=True))
            parts[2::4] = map(mapping.__getitem__, tokens)
        text = "".join(parts)
    return text


END = "\nend\n"


class ShapeVerdicts:
    """Whether each distinct shape passed the full check, bounded, shared by every text one process checks.

    A ``.session`` is its switch's ``.cfg`` (without ``end``) between a prologue
    and an epilogue of its own. When the ``.cfg`` was the text checked last, the
    session's shape is that config's shape between the shapes of its own lines:
    the session check compares its prologue with the body's section headers
    only, which renaming leaves as they are. Lines around the config that hold
    ``neighbor`` would join the BGP block the rules read, so such a session is
    shaped as one text (one numbering of neighbour addresses).
    """

    LIMIT = 256

    def __init__(self, check: Callable[[str, str], bool]) -> None:
        self._check = check
        self._clean: dict[tuple[str, str], bool] = {}
        self._last: tuple[str, str] = ("", "")
        """The last ``.cfg`` checked, without ``end``, and its shape without ``end``."""

    def clean(self, kind: str, text: str) -> bool:
        """True when ``text``'s shape passes the full check of ``kind`` (so ``text`` passes it too)."""
        if kind == ".session":
            body, body_shape = self._last
            at = text.find(body) if body else -1
            head, tail = (text[:at], text[at + len(body):]) if at >= 0 else ("", "")
            if at < 0 or "neighbor " in head or "neighbor " in tail:  # the BGP rules must see one numbering
                key = (kind, shape(text, SESSION_PASSES))
            else:
                key = (kind, shape(head, AROUND_PASSES) + body_shape + shape(tail, AROUND_PASSES))
        else:
            key = (kind, shape(text))
            if text.endswith(END) and key[1].endswith(END):
                self._last = (text[:-len("end\n")], key[1][:-len("end\n")])
        known = self._clean.get(key)
        if known is None:
            known = remember(self._clean, key, self._check(kind, key[1]), self.LIMIT)
        return known
