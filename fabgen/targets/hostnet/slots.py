"""A filled-in netplan file's check verdict from its slots, without the check's regex passes over its text.

Why: host-net fills each host's ``netplan.yaml`` from its shape with one
``str.format`` (:func:`fabgen.targets.hostnet.config._render`), and then its
output check (:func:`fabgen.targets.hostnet.config.check_host_network_file`)
reduced every host's 6 KB back to a shape by two regex passes (drop the
whole-line comments, turn each quoted well-formed address into one
placeholder): 18 MB of text at 24k hosts, most of what the target cost beyond
its fill. For a text known to be the shape filled with given values, what those
passes produce is known from the values alone.

What is shown, and why that gives the check's answer. The shape text (the
shape's render, with numbered sentinels for the values) is read once: every
sentinel that is not on a whole-line comment must stand as ``"SENTINEL"``, a
YAML string of its own, or the shape proves nothing. The values are the ones
the renderer already required to print verbatim
(:func:`fabgen.targets.hostnet.escape.print_verbatim`): no line break, ``#``,
quote or tab, never empty, no blank first character. Then, in the filled text,

* whole-line comments are the shape's: a value cannot end a line, start a
  comment, or (standing after a ``"``) make a line start with blanks and ``#``;
  a comment's values vanish with it;
* the address pass (:data:`~fabgen.targets.hostnet.config._QUOTED_ADDRESS`,
  led by ``"``) can start in a value only at the quote before it, since a
  value holds no quote; what it reads there is the value and the closing
  quote. :func:`NetplanProof.signature` runs the same pattern with a tab in
  place of each quote (a tab is, like the quote, neither digit nor dot, and
  in the lookahead's set) over the values alone, marking each match with a
  NUL (which no value holds), so the signature says exactly which values
  were replaced and what of each stays;
* matches in the shape's own text read only its own characters and the
  quote before a value, so they are the same for every host.

Half of a host's slots repeat another's value (a NIC's address is the
source of each of its routes); the signature is a function of each value
alone, so :meth:`NetplanProof.key` reads each value the shape's first filled
host repeats once, after one tuple comparison shows this host repeats them
too (else the full signature).

So two texts of one shape and one signature reduce to one text, and the
check's verdict on the first (it depends on nothing else: the path only picks
the netplan reader, by a suffix the shape's path ends in) is the verdict on
every other. A clean verdict vouches for that very string object
(:data:`PROVED_CLEAN`); anything else (a failing signature, a keyfile, a sysctl
file, a text read back from disk) is checked in full as before.
``tests/targets/hostnet/test_host_net_slots.py`` plants faults in one host's
values and compares the problems with the full check's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from operator import itemgetter

from fabgen.targets.memo import remember
from fabgen.targets.proved_clean import ProvedClean

_SENTINEL = re.compile(r"fabgen-sentinel-(\d{4})-")
_COMMENT = re.compile(r"[ \t]*#")
OCTET = r"(?:[3-9]\d?|1\d{0,2}|2(?:[0-4]\d?|5[0-5]?|[6-9])?|0)"
"""0..255 without leading zeros, each alternative told apart by its first digit (no backtracking between them):
a third cheaper than :data:`fabgen.targets.hostnet.config._IPV4`'s octet, and a subset of it, so what it accepts the shape check accepts too."""
_LEADING_ADDRESS = re.compile(rf"\t{OCTET}(?:\.{OCTET}){{3}}(?=[/\t])")
""":data:`fabgen.targets.hostnet.config._QUOTED_ADDRESS` with a tab for its quote, in the lead and the lookahead."""
NETPLAN_SUFFIX = "/netplan.yaml"


class NetplanProof:
    """One netplan shape's slots read once; :meth:`signature` of one host's values (None: nothing proved)."""

    _reps: Callable[[Sequence[str]], tuple[str, ...]]
    _dup_reps: Callable[[Sequence[str]], tuple[str, ...]]

    def __init__(self, path: str, shape: str, reference: Sequence[str] | None = None) -> None:
        self.ok = False
        self._dups: Callable[[Sequence[str]], tuple[str, ...]] | None = None
        indices: list[int] = []
        if not path.endswith(NETPLAN_SUFFIX):
            return
        for line in shape.split("\n"):
            if "fabgen-sentinel-" not in line or _COMMENT.match(line):
                continue
            parts = _SENTINEL.split(line)
            # parts: text, index, text, index, ..., text: each value must be the whole of a quoted string
            for n in range(1, len(parts), 2):
                if not (parts[n - 1].endswith('"') and parts[n + 1].startswith('"')):
                    return
                indices.append(int(parts[n]))
            if "fabgen-sentinel-" in "".join(parts[::2]):
                return  # a sentinel the split did not read (malformed): prove nothing
        self._get = _getter(indices)
        self.ok = True
        if reference is not None:
            self._dedup(indices, reference)

    def _dedup(self, indices: list[int], reference: Sequence[str]) -> None:
        """Learn which slots the reference host's values repeat (a NIC's address is the source of each of its
        routes), so that :meth:`key` reads each repeated value once while another host repeats it too."""
        first: dict[str, int] = {}
        for i in indices:
            first.setdefault(reference[i], i)
        reps = sorted(first.values())
        repeats = sorted({i for i in indices if first[reference[i]] != i})
        if repeats:
            self._reps = _getter(reps)
            self._dups = _getter(repeats)
            self._dup_reps = _getter([first[reference[i]] for i in repeats])

    def signature(self, values: Sequence[str]) -> str | None:
        """What the address pass keeps of these values, NUL-marked where it put its placeholder, in slot order."""
        if not self.ok:
            return None
        return _LEADING_ADDRESS.sub("\t\x00", "\t" + "\t".join(self._get(values)) + "\t")

    def key(self, values: Sequence[str]) -> str | None:
        """A string that is equal for two hosts' values only when their :meth:`signature` is (None: nothing proved).

        Why not the signature itself: half of a host's slots repeat another slot's
        value, and the signature is a function of each value alone (the address
        pass reads one value at a time: a value holds no tab), so where the
        repeats the reference host showed hold here too (one tuple comparison in
        C), the signature of the first slot of each value says all the full one
        does, at half its regex cost. ``r`` and ``f`` keep the two forms apart.
        """
        if self._dups is None or self._dups(values) != self._dup_reps(values):
            signature = self.signature(values)
            return None if signature is None else "f" + signature
        return "r" + _LEADING_ADDRESS.sub("\t\x00", "\t" + "\t".join(self._reps(values)) + "\t")


def _getter(indices: Sequence[int]) -> Callable[[Sequence[str]], tuple[str, ...]]:
    """``values -> tuple of values[i] for i in indices``, by one C call when there are two or more."""
    if len(indices) > 1:
        return itemgetter(*indices)
    return lambda values: tuple(values[i] for i in indices)


class Fill:
    """One shape text cut at its sentinels; calling it with a host's values gives that host's text.

    Why not ``str.format`` with ``{N}`` fields: format parses its 5 KB format
    string again on every call and converts each of a hundred fields on its
    own (110 ms for 3,072 netplan files at 24k hosts); here the cut is made
    once, and a host is a list copy, one C ``itemgetter`` into its odd places
    and a join (20 ms). The text is the shape's with every sentinel replaced by
    ``values[N]``, exactly what the format string gave, braces and all.
    """

    __slots__ = ("_get", "_pieces")

    def __init__(self, shape: str) -> None:
        parts = _SENTINEL.split(shape)
        self._pieces: list[str] = [""] * len(parts)  # the shape's own text at even places, values at odd ones
        self._pieces[0::2] = parts[0::2]
        self._get = _getter([int(n) for n in parts[1::2]])

    def __call__(self, values: Sequence[str]) -> str:
        pieces = self._pieces.copy()
        pieces[1::2] = self._get(values)
        return "".join(pieces)


PROVED_CLEAN = ProvedClean()
"""The netplan files a proof showed clean (:mod:`fabgen.targets.proved_clean`)."""


class Verdicts:
    """Per render run: the check's verdict for each (shape, signature) seen, bounded."""

    LIMIT = 256

    def __init__(self, check: Callable[[str, str], Sequence[object]]) -> None:
        self._check = check
        self._known: dict[tuple[object, str], bool] = {}

    def vouch_filled(self, key: object, proof: NetplanProof, values: Sequence[str], path: str, text: str) -> None:
        """Vouch for ``text`` (the shape of ``proof`` filled with ``values``) when its signature's verdict is clean."""
        signature = proof.key(values)
        if signature is None:
            return
        clean = self._known.get((key, signature))
        if clean is None:
            clean = remember(self._known, (key, signature), not self._check(path, text), self.LIMIT)
        if clean:
            PROVED_CLEAN.vouch(path, text)
