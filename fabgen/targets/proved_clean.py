"""Texts a renderer proved clean, so that their output check is one identity test.

EOS (:mod:`fabgen.targets.eos.slots`) and host-net
(:mod:`fabgen.targets.hostnet.slots`) prove a filled text clean from its
shape's verdict and its values; the target's check then only has to recognise
that very text. Only the same object counts (``is``, not ``==``): any other
text at the path, a cached one read back from disk for instance, is checked
as usual, and a vouch is good for one check.
"""

from __future__ import annotations

from fabgen.targets.memo import remember


class ProvedClean:
    """path -> the text proved clean, until that path is checked next; bounded."""

    LIMIT = 64
    """A render whose files are never checked leaves a few entries, not one per device."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}

    def vouch(self, path: str, text: str) -> None:
        remember(self._texts, path, text, self.LIMIT)

    def take(self, path: str, text: str) -> bool:
        """``text`` was vouched for at ``path``, and no longer is."""
        return self._texts.pop(path, None) is text

    def holds(self, path: str, text: str) -> bool:
        """``text`` is vouched for at ``path`` (a look that leaves the vouch in place)."""
        return self._texts.get(path) is text
