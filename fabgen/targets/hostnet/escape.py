"""Filters that print one value into a host's network file without opening a new line or key.

The plan already restricts netdevs to Linux interface names and computes every
address, so these filters are defence in depth: a template edit (or a user's
overlay) that prints something unexpected fails the render rather than writing
a file whose meaning an attacker chose.
"""

from __future__ import annotations

import json
import re

_KEYFILE_VALUE = re.compile(r"^[A-Za-z0-9_.:/,= -]{1,200}$")
"""What a NetworkManager keyfile value of ours can hold: names, addresses, ``key=value`` options."""


def yaml_str(value: object) -> str:
    """A YAML double-quoted scalar (JSON strings are YAML): no newline, ``#`` or ``:`` can escape it."""
    if not isinstance(value, str):
        raise TypeError(f"yaml_str: refusing {type(value).__name__} value {value!r}")
    return json.dumps(value, ensure_ascii=True)


def keyfile_value(value: object) -> str:
    """A keyfile value: keyfiles have no quoting, so anything beyond the safe set is refused."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise TypeError(f"keyfile_value: refusing {type(value).__name__} value {value!r}")
    text = str(value)
    if not _KEYFILE_VALUE.match(text) or text != text.strip():
        raise ValueError(f"keyfile_value: refusing {text!r}")
    return text


_SAFE_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:/,= -"
""":data:`_KEYFILE_VALUE`'s class as bytes: deleting them from a value leaves only what it must not hold."""
_SAFE_BYTES_BUT_BLANK = _SAFE_BYTES.replace(b" ", b"")


def print_verbatim(values: list[str]) -> bool:
    """Each value prints as itself through every filter here (inside yaml_str's quotes): the renderer may paste it."""
    return verbatim_joined(values) is not None


def verbatim_joined(values: list[str]) -> str | None:
    """The values joined by tabs when :func:`print_verbatim` holds (the caller reuses the join), else None.

    The same test as :func:`keyfile_value`'s, run over the values joined by tabs
    (which no value may hold) rather than one match per value: a host has a
    hundred of them. Deleting the safe class from the ASCII bytes (one C pass,
    a sixth of a regex's ``fullmatch`` of the class) must leave exactly the
    separating tabs; the blank edges are substring tests.
    """
    joined = "\t".join(values)
    if not (values and all(values) and joined.isascii()):
        return None
    tabs = b"\t" * (len(values) - 1)
    rest = joined.encode("ascii").translate(None, _SAFE_BYTES_BUT_BLANK)
    if rest != tabs and (rest.translate(None, b" ") != tabs or joined.startswith(" ") or joined.endswith(" ")
                         or "\t " in joined or " \t" in joined):
        return None  # (no blank at all, the usual case, has no blank edge either: one comparison says both)
    return joined if max(map(len, values)) <= 200 else None


def comment_text(value: object) -> str:
    """Text inside a ``#`` comment: one line of printable ASCII."""
    text = str(value)
    if not text.isascii() or not text.isprintable():
        raise ValueError(f"comment_text: refusing {text!r}")
    return text
