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


_SAFE_RUN = re.compile(r"[A-Za-z0-9_.:/,= \t-]*")


def print_verbatim(values: list[str]) -> bool:
    """Each value prints as itself through every filter here (inside yaml_str's quotes): the renderer may paste it.

    The same test as :func:`keyfile_value`'s, run over the values joined by tabs
    (which no value may hold) rather than one match per value: a host has a
    hundred of them. A run of the safe class with ``fullmatch`` is twenty times
    cheaper than searching for an unsafe character or blank edge, which tries
    every alternative at every offset; the blank edges are substring tests.
    """
    joined = "\t".join(values)
    return (all(values) and bool(values) and joined.count("\t") == len(values) - 1
            and _SAFE_RUN.fullmatch(joined) is not None
            and not (joined.startswith(" ") or joined.endswith(" ") or "\t " in joined or " \t" in joined)
            and max(map(len, values)) <= 200)


def comment_text(value: object) -> str:
    """Text inside a ``#`` comment: one line of printable ASCII."""
    text = str(value)
    if not text.isascii() or not text.isprintable():
        raise ValueError(f"comment_text: refusing {text!r}")
    return text
