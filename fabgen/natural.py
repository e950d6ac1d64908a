"""The one natural sort key: ``Ethernet2/1`` before ``Ethernet10/1``, ``leaf-2`` before ``leaf-10``.

Why one: EOS port order in the configs, the order of ``fabgen diff``, of wiring
findings and of the ports and addresses a lint message names all sort names
of one kind; one key keeps them in the same order everywhere.
"""

from __future__ import annotations

import re
from functools import lru_cache

_PARTS = re.compile(r"\d+|\D+")


@lru_cache(maxsize=1 << 16)
def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """Runs of digits compare as numbers, the text between as text; at one place a number sorts before text.

    Memoised: every switch of a tier has the same port names, every host the same NIC names.
    """
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in _PARTS.findall(name))
