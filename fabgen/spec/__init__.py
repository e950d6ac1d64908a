"""Validate a loaded spec into an immutable :class:`ClusterSpec`.

pydantic checks each object on its own; :mod:`fabgen.spec.references` checks
that the parts name each other correctly. Both report every problem of the
file at once, each at its ``file:line:col``.
"""

from __future__ import annotations

from fabgen.spec.cluster import ClusterSpec
from fabgen.spec.validate import validate_spec

__all__ = ["ClusterSpec", "validate_spec"]
