"""A filled-in EOS text's check verdict from its slots, without reading the text again.

Why: the shape check (:mod:`fabgen.targets.eos.shape`) reduces each text to
its shape by ten regex passes over its 20-40 KB, once per ``.cfg`` and once per
``.session``: most of the EOS target's time once rendering is a fill. A text
that :mod:`fabgen.targets.eos.fill` made is known to be its shape's pieces with
the switch's values between them, so what the passes would find is known
before they run: the values are the only tokens that differ from the pieces.

What is shown, and why that gives the check's answer. The shape text (the
pieces with numbered sentinels, a session's with its config's pieces in
place of its body) is read once: each sentinel must stand in one of the line
forms fabgen's templates write (:data:`FORMS`) and in the part of the text the
pass for its type reads (between the same anchors), or the shape proves
nothing. Then, for one switch's values, if

* every value fully matches the token pattern of its pass (the same
  :data:`fabgen.targets.eos.shape.TEXT`, ``IP``, ``ASN`` ...), holds no line
  break, and equals no token the shape's own text holds for that pass;
* the values that are no pass's tokens (a headroom size) are digits;
* in a session, ``fabgen-`` occurs only where its name stands;

then each pass of :func:`fabgen.targets.eos.shape.shape` finds exactly these
tokens at these places (the free-text passes run first and leave no value that
could hold another pass's context or an anchor; the other values are digits,
dots and one ``/``, which hold none), and renames them by their order of
first appearance, their equalities and the few things a canonical token keeps
(a ``/31`` or ``/32`` after an address, a network's last-octet parity, a
subnet's length and whether its host part is valid). The *signature* is just
that: per pass, which values are equal, and what is kept. Two texts of one
shape and one signature therefore have one shape text, so the shape check's
verdict on the first is the verdict on every other (its soundness is
:mod:`fabgen.targets.eos.shape`'s). ``tests/targets/eos/test_slots.py``
checks that claim directly: edited values with equal signatures must have
equal shape texts, and every edit must get the full check's answer.

Anything else (a value that does not match, a shape with a sentinel in an
unknown line) is simply not vouched for, and the text gets the shape check
of :mod:`fabgen.targets.eos.check` as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from socket import inet_aton
from typing import Any

from fabgen.targets.eos.check import PROVED_CLEAN, check_eos_config
from fabgen.targets.eos.fill import MARK, Split
from fabgen.targets.eos.shape import BGP, CONFIG_PASSES, IP, NAME_PASS, PORTS, SESSION_PASSES, Pass
from fabgen.targets.eos.text import TEXT_TOKENS, prefixes, quads
from fabgen.targets.memo import remember

_SLOT = r"\x00([0-9]+)\x00"
_SENTINEL = re.compile(_SLOT)
_MANAGEMENT = "\ninterface Management"

Tokens = tuple[str, ...]
Match = Callable[[Tokens], "tuple[Sequence[str], tuple[Any, ...]] | None"]
"""Tokens -> (what equalities are taken of, what the canonical forms keep), or None when one is no token."""

_FIRST, _LAST, _LAST_OF_ADDRESS = itemgetter(0), itemgetter(-1), itemgetter(-4)
_BEFORE_LENGTH = itemgetter(slice(None, -3))
_PARITY = str.maketrans("0123456789", "0101010101")
_HOSTNAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_NAME = re.compile(r"fabgen-[0-9a-f]{12}")


_PRINTABLE = bytes(range(0x20, 0x7F))
_DIGITS_AND_SPACE = b"0123456789 "


def _text(tokens: Tokens) -> tuple[Sequence[str], tuple[Any, ...]] | None:
    """:data:`~fabgen.targets.eos.shape.TEXT`: 1-240 printable ASCII characters but ``?``, no space at either
    end, no ``bfd``.

    Told over the tokens joined by ``?`` (no token may hold one), by a few C-level searches instead of a test
    per token: a ``?`` at either end or next to another, or next to a space, is an empty token or one with a
    space at an end; ``bfd`` cannot span two tokens, as a ``?`` stands between them. Tokens
    :data:`~fabgen.targets.eos.text.TEXT_TOKENS` holds (a switch's descriptions) were proved so already."""
    if tokens and TEXT_TOKENS.issuperset(tokens):
        return tokens, ()
    joined = "?".join(tokens)
    if (not joined or not joined.isascii() or joined.encode().translate(None, _PRINTABLE)
            or joined.count("?") != len(tokens) - 1 or "bfd" in joined
            or joined[0] in " ?" or joined[-1] in " ?" or "??" in joined or "? " in joined or " ?" in joined
            or (len(joined) - len(tokens) >= 240 and max(map(len, tokens)) > 240)):
        return None
    return tokens, ()


def _asn(tokens: Tokens) -> tuple[Sequence[str], tuple[Any, ...]] | None:
    """:data:`~fabgen.targets.eos.shape.ASN`: 1-4294967295 in ASCII digits, no leading zero (told over the
    tokens joined by a space, as :func:`_text` is)."""
    joined = " ".join(tokens)
    if (not joined or not joined.isascii() or joined.encode().translate(None, _DIGITS_AND_SPACE)
            or joined.count(" ") != len(tokens) - 1 or joined[0] in " 0" or joined[-1] == " "
            or "  " in joined or " 0" in joined):
        return None
    longest = max(map(len, tokens))
    if longest > 10 or (longest == 10 and max(map(int, tokens)) > 4294967295):
        return None
    return tokens, ()


def _address(tokens: Tokens) -> tuple[Sequence[str], tuple[Any, ...]] | None:
    """A dotted quad."""
    return (tokens, ()) if quads(tokens) else None


def _prefix(tokens: Tokens) -> tuple[Sequence[str], tuple[Any, ...]] | None:
    """A dotted quad and ``/31`` or ``/32`` (:func:`~fabgen.targets.eos.text.prefixes`): the pass renames the
    quad (equalities are of it, the token without its last three characters) and the length stays in the text
    (kept: each token's last character)."""
    if not prefixes(tokens):
        return None
    return list(map(_BEFORE_LENGTH, tokens)), ("".join(map(_LAST, tokens)),)


def _network(tokens: Tokens) -> tuple[Sequence[str], tuple[Any, ...]] | None:
    """A prefix whose canonical form also keeps its last octet's parity (a /31 with host bits set stays so)."""
    found = _prefix(tokens)
    if found is None:
        return None
    return found[0], (*found[1], "".join(map(_LAST_OF_ADDRESS, tokens)).translate(_PARITY))


def _one(pattern: re.Pattern[str]) -> Match:
    """Tokens each fully matching ``pattern`` (a hostname, a session name: one or a few per text)."""
    def match(tokens: Tokens) -> tuple[Sequence[str], tuple[Any, ...]] | None:
        return (tokens, ()) if all(map(pattern.fullmatch, tokens)) else None

    return match


_TOKENS: dict[str, tuple[Pass, Match]] = {
    "description": (CONFIG_PASSES[0], _text),
    "comment": (CONFIG_PASSES[1], _text),
    "hostname": (CONFIG_PASSES[2], _one(_HOSTNAME)),
    "address": (CONFIG_PASSES[3], _prefix),
    "asn": (CONFIG_PASSES[5], _asn),
    "remote-as": (CONFIG_PASSES[6], _asn),
    "neighbor": (CONFIG_PASSES[7], _address),
    "router-id": (CONFIG_PASSES[8], _address),
    "network": (CONFIG_PASSES[9], _network),
    "name": (NAME_PASS, _one(_NAME)),
}
"""Each value type: the pass of :mod:`fabgen.targets.eos.shape` that renames it, and the match of its token
pattern (``tests/targets/eos/test_slots.py`` compares each match with that pattern on many strings)."""
SUBNET_PASS = CONFIG_PASSES[4]
_HOST_LENGTHS = ("/31", "/32")
_SUBNET = re.compile(rf"{IP}/(?:[0-9]|[12][0-9]|30)")

FORMS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = tuple((re.compile(line), names) for line, names in (
    (rf"! fabgen: {_SLOT}", ("comment:fabgen: ",)),
    (rf"! {_SLOT}", ("comment:",)),
    (rf"hostname {_SLOT}", ("hostname",)),
    (rf"   ingress headroom bytes {_SLOT}", ("digits",)),
    (rf"   description {_SLOT}", ("description",)),
    (rf"   ip address {_SLOT}", ("address",)),
    (rf"router bgp {_SLOT}", ("asn",)),
    (rf"   router-id {_SLOT}", ("router-id",)),
    (rf"   neighbor {_SLOT} remote-as {_SLOT}", ("neighbor", "remote-as")),
    (rf"   neighbor {_SLOT} description {_SLOT}", ("neighbor", "description")),
    (rf"   neighbor {_SLOT} bfd(?: [ -~]*)?", ("neighbor",)),
    (rf"      neighbor {_SLOT} activate", ("neighbor",)),
    (rf"      network {_SLOT}", ("network",)),
    (rf"(?:configure session|!   configure session|! or discard it: configure session) {_SLOT}(?: commit| abort)?",
     ("name",)),
))
"""Every line of fabgen's EOS templates that holds a value, and the type of each value in it. ``comment:P``
is a comment whose token is ``P`` and the value (the pass reads the comment's whole text)."""

Signature = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class _Group:
    """The values one pass renames: where they are, how they are matched, what their canonical form keeps."""

    name: str
    indices: tuple[int, ...]
    get: Callable[[Sequence[str]], Tokens]
    prefixes: tuple[str, ...] | None
    """Text put before each value to make the pass's token (a comment's ``fabgen: ``); None when the value is it."""
    match: Match
    constants: frozenset[str]
    """The tokens of this pass in the shape's own text: a value equal to one would be numbered with it."""


def _getter(indices: tuple[int, ...]) -> Callable[[Sequence[str]], Tokens]:
    if len(indices) == 1:
        only = indices[0]
        return lambda values: (values[only],)
    return itemgetter(*indices)


def _constants(text: str, entry: Pass) -> frozenset[str]:
    """The tokens ``entry``'s pass finds in the shape text's own words (sentinels match no token pattern)."""
    pattern, _canon, begin, until, _most = entry
    start = text.find(begin) if begin else 0
    if start < 0:
        return frozenset()
    end = text.find(until, start) if until else -1
    group = 2 if pattern.groups == 3 else 1
    return frozenset(m[group] for m in pattern.finditer(text, start, len(text) if end < 0 else end))


def _pattern(keys: Sequence[str]) -> tuple[int, ...] | None:
    """None when all keys differ (one C-level set; none for a single key), else each key's first index among
    the keys equal to it (a function of which keys are equal, nothing else)."""
    count = len(keys)
    if count < 2 or len(set(keys)) == count:  # a set is built in about half a dict's time
        return None
    first = dict(zip(reversed(keys), range(count - 1, -1, -1), strict=True))  # earliest index written last
    return tuple(map(first.__getitem__, keys))


class _Partition:
    """:func:`_pattern` of one group's keys, switch after switch: a fleet's descriptions repeat one pattern
    (each neighbour's is its port's), so the last pattern with equalities is tested first, by two C-level
    passes instead of building it again.

    Why the test gives :func:`_pattern`'s answer: ``P`` is a first-index map (``P[P[i]] == P[i] <= i``). If
    ``keys[P[i]] == keys[i]`` for every ``i`` and the keys at the places ``P`` maps to themselves (its
    representatives) all differ, then the keys equal to ``keys[i]`` are exactly those ``j`` with
    ``P[j] == P[i]``, whose smallest is ``P[i]`` itself: ``P`` is the keys' own first-index map."""

    __slots__ = ("_count", "_last", "_representatives", "_same")

    def __init__(self) -> None:
        self._last: tuple[int, ...] | None = None
        self._same: Callable[[Sequence[str]], Any] = tuple
        self._representatives: Callable[[Sequence[str]], Any] = tuple
        self._count = 0

    def of(self, keys: Sequence[str]) -> tuple[int, ...] | None:
        last = self._last
        if last is not None and len(keys) == len(last):
            same = self._same(keys)
            if same == (keys if type(keys) is tuple else tuple(keys)) and (
                    self._count < 2 or len(set(self._representatives(keys))) == self._count):
                return last
        found = _pattern(keys)
        if found is not None:
            representatives = tuple(i for i, first in enumerate(found) if first == i)
            self._last, self._same, self._count = found, itemgetter(*found), len(representatives)
            self._representatives = itemgetter(*representatives) if len(representatives) > 1 else tuple
        return found


_FABGEN = "fabgen-"


def _apart(text: str) -> bool:
    """No ``fabgen-`` in a text of this shape can run across a value's edge: the character before each
    sentinel is no letter of ``fabgen`` and the one after it none of ``abgen-`` (nor another sentinel, whose
    value could hold the rest). Then the text's count of ``fabgen-`` is its shape's plus its values' own,
    and a session's values (some 6 KB) are read instead of its 30 KB text."""
    for found in _SENTINEL.finditer(text):
        start, end = found.start(), found.end()
        if (start and (text[start - 1] in _FABGEN[:-1] or text[start - 1] == MARK)) or (
                end < len(text) and (text[end] in _FABGEN[1:] or text[end] == MARK)):
            return False
    return True


class SlotProof:
    """One shape text's slots, classified once; :meth:`signature` of one text's values."""

    def __init__(self, text: str, passes: tuple[Pass, ...]) -> None:
        self.ok = False
        self._groups: list[_Group] = []
        self._digits: tuple[int, ...] = ()
        self._management: tuple[int, ...] = ()
        self._fabgen = -1
        self._names = 0
        self._apart = False
        kinds = self._classify(text)
        if kinds is None:
            return
        by_name: dict[str, list[tuple[int, str]]] = {}
        for index, kind in sorted(kinds.items()):
            if kind == "digits":
                self._digits += (index,)
            elif kind == "management":
                self._management += (index,)
            else:
                name, _, prefix = kind.partition(":")
                if _TOKENS[name][0] not in passes:
                    return
                by_name.setdefault(name, []).append((index, prefix))
        if self._management and "address" not in by_name:
            return
        for name, slots in sorted(by_name.items(), key=lambda item: passes.index(_TOKENS[item[0]][0])):
            entry, match = _TOKENS[name]
            prefixes = tuple(p for _, p in slots)
            indices = tuple(i for i, _ in slots)
            self._groups.append(_Group(name, indices, _getter(indices), prefixes if any(prefixes) else None,
                                       match, _constants(text, entry)))
        self._subnet_constants = _constants(text, SUBNET_PASS)
        if NAME_PASS in passes:
            self._fabgen = text.count("fabgen-") + sum(text.count(f"{MARK}{i}{MARK}") for i, kind in kinds.items()
                                                       if kind == "name")
            self._names = sum(kind == "name" for kind in kinds.values())
            self._apart = _apart(text)
        self._partitions = [_Partition() for _ in self._groups]
        self._last: list[tuple[Tokens, Any] | None] = [None] * len(self._groups)
        """Each group's last tokens and what :meth:`_sign` made of them, a function of the tokens alone: a
        fleet's neighbours of one tier mostly have one AS list, so the switch after one signs it again."""
        self.ok = True

    @staticmethod
    def _classify(text: str) -> dict[int, str] | None:
        """Each value's type from the lines it stands in; None when one stands anywhere else, or when the
        ``router bgp `` anchor the later passes start from is not the one ``router bgp`` line."""
        ports, bgp, management = text.find(PORTS), text.find(BGP), text.find(_MANAGEMENT)
        hostname, asn = text.find("\nhostname "), text.find("\nrouter bgp ")
        if text.count(BGP) > 1 or (bgp >= 0 and asn + 1 != bgp):
            return None
        router_id = text.find("router-id ", bgp) if bgp >= 0 else -1
        kinds: dict[int, str] = {}
        for line in re.finditer(r"[^\n]*\x00[^\n]*", text):
            start = line.start()
            form = next(((m, names) for pattern, names in FORMS if (m := pattern.fullmatch(line[0]))), None)
            if form is None:
                return None
            match, names = form
            for group, name in enumerate(names, 1):
                at = start + match.start(group)
                if name.startswith("comment:"):
                    fits = ports < 0 or at < ports
                elif name == "description":
                    fits = 0 <= ports < at
                elif name == "hostname":
                    fits = hostname + 1 == start
                elif name == "address":
                    fits = 0 <= ports < at and (bgp < 0 or at < bgp)
                    if fits and 0 <= management < at:
                        name = "management"
                elif name == "asn":
                    fits = bgp == start
                elif name == "router-id":
                    fits = 0 <= bgp < at and start <= router_id < at
                elif name in ("remote-as", "neighbor", "network"):
                    fits = 0 <= bgp < at
                else:
                    fits = True  # digits, and the session's name (its pass reads the whole text)
                index = int(match[group])
                if not fits or kinds.setdefault(index, name) != name:
                    return None
        return kinds

    def reusing(self, other: SlotProof, shift: int) -> tuple[int | None, ...]:
        """For each of this proof's groups, the index of ``other``'s group that signs the same values alike
        when this proof's value ``i + shift`` is ``other``'s value ``i`` (a session's values are its title, its
        name, then its config's), else None.

        Alike means the same type, slots, prefixes and shape tokens (and, for addresses, the same management
        slots and subnet tokens): everything :meth:`_sign` reads but the values themselves, so its answer for
        the one group is its answer for the other."""
        found: list[int | None] = []
        for group in self._groups:
            match = None
            for index, mine in enumerate(other._groups):
                if (mine.name == group.name and tuple(i + shift for i in mine.indices) == group.indices
                        and mine.prefixes == group.prefixes and mine.constants == group.constants
                        and (group.name != "address" or (
                            tuple(i + shift for i in other._management) == self._management
                            and other._subnet_constants == self._subnet_constants))):
                    match = index
            found.append(match)
        return tuple(found)

    def signature(self, values: Sequence[str], text: str,
                  reuse: tuple[Signature, tuple[int | None, ...]] | None = None) -> Signature | None:
        """What the shape passes would keep of ``values`` in ``text`` (this shape filled with them), or None
        when they are not all tokens these slots prove (then nothing is vouched). ``reuse`` is another proof's
        signature of the same values and :meth:`reusing`'s map onto its groups: those groups are taken from
        it, not signed again (a session's are mostly its config's)."""
        if not self.ok:
            return None
        out: list[Any] = []
        signed: Any
        for at, group in enumerate(self._groups):
            if reuse is not None and (index := reuse[1][at]) is not None:
                out.append(reuse[0][index])
                continue
            tokens = group.get(values)
            if group.prefixes is not None:
                tokens = tuple(p + t for p, t in zip(group.prefixes, tokens, strict=True))
            last = self._last[at]
            if last is not None and last[0] == tokens:
                out.append(last[1])
                continue
            signed = self._sign(group, tokens, values, self._partitions[at])
            if signed is None:
                return None
            if group.name != "address" or not self._management:  # else it reads the management values too
                self._last[at] = (tokens, signed)
            out.append(signed)
        digits = "".join(values[i] for i in self._digits)
        if not (digits.isascii() and digits.isdigit()) and self._digits:
            return None
        out.append(tuple(values[i] for i in self._digits))
        if self._fabgen >= 0 and (
                "\n".join(values).count("fabgen-") != self._names if self._apart
                else text.count("fabgen-") != self._fabgen):
            return None
        return tuple(out)

    def _sign(self, group: _Group, tokens: Tokens, values: Sequence[str],
              partition: _Partition | None = None) -> tuple[Any, ...] | None:
        found = group.match(tokens)
        if found is None:
            return None
        keys, kept = found
        if group.name == "address" and self._management:
            management = self._management_keys(values)
            if management is None:
                return None
            keys, kept = [*keys, *management[0]], (*kept, management[1])
        if group.constants and not group.constants.isdisjoint(keys):
            return None
        return (_pattern(keys) if partition is None else partition.of(keys)), kept

    def _management_keys(self, values: Sequence[str]) -> tuple[list[str], tuple[Any, ...]] | None:
        """A management address (after ``interface Management``): a ``/31`` or ``/32`` one is numbered with
        the port addresses; a shorter prefix by the subnet pass, whose canonical form keeps its length and
        whether its host part is valid; anything else is not proved."""
        keys: list[str] = []
        subnets: list[str] = []
        kept: list[Any] = []
        for index in self._management:
            value = values[index]
            if value.endswith(_HOST_LENGTHS) and (found := _prefix((value,))) is not None:
                keys += found[0]
                kept.append(found[1])
            elif _SUBNET.fullmatch(value):
                address, _, length = value.partition("/")
                size = 32 - int(length)
                # _SUBNET's quad is strict, so inet_aton reads its four octets and nothing else
                host = int.from_bytes(inet_aton(address), "big") & ((1 << size) - 1)
                subnets.append(value)
                kept.append((length, host not in (0, (1 << size) - 1)))
            else:
                return None
        if not self._subnet_constants.isdisjoint(subnets):
            return None
        return keys, (*kept, _pattern(subnets))


def shape_text(pieces: Split, body: str | None = None) -> str:
    """The shape's text with its numbered sentinels; for a session (whose value 2 is its body), with ``body``
    (its config's shape text without ``end``, values numbered from 2) in that sentinel's place."""
    texts, order = pieces
    out = [texts[0]]
    for index, text in zip(order, texts[1:], strict=True):
        out.append(body if body is not None and index == 2 else f"{MARK}{index}{MARK}")
        out.append(text)
    return "".join(out)


Filled = tuple[str, str, Split, list[str]]
"""(path, text, the split it is filled from, its values)."""


class Vouchers:
    """Per run: each shape's :class:`SlotProof`, and the check's verdict for each signature seen (bounded).

    A session's values are its title, its name and then its config's, and its groups but the name and the
    comments are its config's groups at the same slots with the same shape tokens; so those are taken from the
    config's signature (:meth:`SlotProof.reusing`), and a session costs the signing of two small groups."""

    LIMIT = 256

    def __init__(self) -> None:
        self._proofs: dict[tuple[str, Any], SlotProof] = {}
        self._sessions: dict[Any, tuple[SlotProof, tuple[int | None, ...]]] = {}
        self._verdicts: dict[tuple[str, Any, Signature], bool] = {}

    def _clean(self, kind: str, key: Any, signature: Signature, path: str, text: str) -> bool:
        """The check's verdict on the first text of this signature, which is every other one's."""
        known = self._verdicts.get((kind, key, signature))
        if known is None:
            known = remember(self._verdicts, (kind, key, signature), not check_eos_config(path, text), self.LIMIT)
        return known

    def vouch(self, key: Any, cfg: Filled, session: Filled) -> None:
        """Marks the config and its session clean for :func:`~fabgen.targets.eos.check.check_eos_config` when
        their signatures' verdicts are; a text not vouched for is checked in full as before."""
        path, text, pieces, values = cfg
        proof = self._proofs.get(("cfg", key))
        if proof is None:
            proof = self._proofs[("cfg", key)] = SlotProof(shape_text(pieces), CONFIG_PASSES)
        signature = proof.signature(values, text)
        if signature is None or not self._clean("cfg", key, signature, path, text):
            return
        PROVED_CLEAN.vouch(path, text)
        session_path, session_text, session_pieces, session_values = session
        held = self._sessions.get(key)
        if held is None:
            body = shape_text(pieces)
            body = body[:-len("end\n")] if body.endswith("\nend\n") else f"{MARK}"
            session_proof = SlotProof(shape_text(session_pieces, _renumbered(body)), SESSION_PASSES)
            held = self._sessions[key] = (session_proof, session_proof.reusing(proof, 2))
        session_proof, reused = held
        signature = session_proof.signature([*session_values[:2], *values], session_text, (signature, reused))
        if signature is not None and self._clean("session", key, signature, session_path, session_text):
            PROVED_CLEAN.vouch(session_path, session_text)


def _renumbered(body: str) -> str:
    """The config's sentinels numbered from 2, after the session's own title (0) and name (1)."""
    return _SENTINEL.sub(lambda m: f"{MARK}{int(m[1]) + 2}{MARK}", body)
