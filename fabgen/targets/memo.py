"""Bounded memos: a dict or set kept for the whole process that starts again empty when it is full.

The output checks answer a line, a shape or a signature they proved before
from a memo, because a fleet repeats most of its lines, within a file and
across devices. What fills a memo comes from the spec, and a spec can name any
number of distinct devices, descriptions and addresses, so every memo has a
declared bound. Past the bound the memo is emptied and filled again, which is
always safe: a forgotten answer is only worked out again. Hits stay a plain
``dict.get`` or ``set`` test at C speed (a subclass would pay a method lookup
on each of a fabric's millions of lines), and only a miss calls here.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def remember(memo: dict[K, V], key: K, value: V, most: int) -> V:
    """``memo[key] = value``, emptying ``memo`` first when it already holds ``most`` entries; returns ``value``."""
    if len(memo) >= most:
        memo.clear()
    memo[key] = value
    return value


def remember_all(memo: set[K], items: Iterable[K], most: int) -> None:
    """Adds ``items`` to ``memo``, emptying it first when it already holds ``most`` (so it ends below ``most``
    plus the batch)."""
    if len(memo) >= most:
        memo.clear()
    memo.update(items)
