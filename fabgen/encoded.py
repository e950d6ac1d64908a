"""Texts a renderer already encoded and hashed, so the writer does not encode and hash the same bytes again.

Why: an EOS switch's ``.session`` is named after the sha256 of its ``.cfg``
(:func:`fabgen.targets.eos.session.session_name`), and the writer then hashed
that very ``.cfg`` again for ``manifest.json``: 2,048 configs, 42 MB, some 28 ms
of a 24k run, for a digest already known. The renderer hands over the bytes
and their digest here; :func:`fabgen.pipeline.generate` takes them for that
text when it writes it. Only the same object counts (``is``, not ``==``), and
an entry is good for one take; an equal text built elsewhere is encoded and
hashed as usual.
"""

from __future__ import annotations

from fabgen.targets.memo import remember

LIMIT = 64
"""A render whose texts are never written (``render_files``, a forked worker's parent) leaves a few entries."""

_KNOWN: dict[int, tuple[str, bytes, str]] = {}
"""``id(text)`` -> (the text itself, kept alive so its id is not reused; its UTF-8 bytes; their sha256 hex)."""


def remember_encoded(text: str, data: bytes, digest: str) -> None:
    """``data`` is ``text.encode("utf-8")`` and ``digest`` its ``sha256().hexdigest()``: the caller computed both."""
    remember(_KNOWN, id(text), (text, data, digest), LIMIT)


def take_encoded(text: str) -> tuple[bytes, str] | None:
    """The bytes and digest remembered for this very ``text`` object, forgotten now; None for any other."""
    found = _KNOWN.pop(id(text), None)
    if found is None or found[0] is not text:
        return None
    return found[1], found[2]
