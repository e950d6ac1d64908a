"""Where the shipped templates and schemas live.

In a wheel they are package data (``fabgen/templates``, ``fabgen/schemas``); in a
checkout or an editable install they are the top-level ``templates/`` and
``schemas/`` directories beside the package.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


@cache
def resource_dir(name: str) -> Path:
    """Directory of a shipped resource family: ``templates`` or ``schemas``."""
    for candidate in (_PACKAGE / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"fabgen installation is incomplete: no {name}/ directory")


def resource_path(name: str, *parts: str) -> Path:
    """A file inside a resource family, e.g. ``resource_path("schemas", "nccl-topo.xsd")``."""
    return resource_dir(name).joinpath(*parts)
