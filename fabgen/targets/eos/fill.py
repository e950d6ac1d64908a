"""Render each distinct shape of EOS config once, then fill every switch's own values in.

Why: the switches of a tier differ only in names, addresses, ASNs and
descriptions; Jinja2 walking 64 interface blocks and 32 neighbours per switch
costs several times the bytes it produces. The templates stay the source of
truth: a shape is the :class:`~fabgen.targets.eos.model.EosConfig` with every
per-switch value replaced by a numbered sentinel, rendered by the same
templates, split at the sentinels; a switch's text is the join of the pieces
with its values. That equals rendering only when the templates print those
values as they are (no filter, no test on them, no autoescape), which holds for
fabgen's own EOS templates and nothing else, so:

* a user overlay of any ``eos/`` template renders every switch in full;
* a value holding the sentinel's marker character renders in full;
* the values that steer a template (an empty description, a shut port, the
  number of networks, BFD on or off) are in the shape's key, not slotted;
* the first switch of each shape is also rendered in full and must equal its
  filled-in text, else that shape renders in full for every switch.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from operator import itemgetter
from typing import TYPE_CHECKING, Any, cast

from fabgen._resources import resource_dir
from fabgen.targets.base import RenderContext
from fabgen.targets.environment import shipped_templates

if TYPE_CHECKING:  # config.py renders through this module
    from fabgen.targets.eos.model import EosConfig

MARK = "\x00"
_SENTINEL = re.compile(MARK + r"(\d+)" + MARK)
Split = tuple[list[str], list[int]]
"""A shape's text between sentinels, and the value index of each sentinel."""


@cache
def _templates() -> tuple[str, ...]:
    """Every ``eos/`` template: an overlay of any of them may compute on a value, so the shape path needs all shipped."""
    return tuple(sorted(f"eos/{path.name}" for path in (resource_dir("templates") / "eos").glob("*.j2")))


def slotted(eos: EosConfig) -> tuple[EosConfig, list[str]]:
    """``eos`` with each per-switch value replaced by its sentinel, and those values
    (:class:`fabgen.targets.eos.values.PlanValues` reads the same values from the plan, in this order)."""
    values: list[str] = []

    def slot(value: object) -> str:
        values.append(str(value))
        return f"{MARK}{len(values) - 1}{MARK}"

    def number(value: int) -> int:
        """A sentinel where a template prints a number (it only prints it, so a string serves)."""
        return cast(int, slot(value))

    shape = replace(eos, title=slot(eos.title), hostname=slot(eos.hostname), mmu_note=slot(eos.mmu_note))
    if eos.mmu:
        shape = replace(shape, mmu=replace(eos.mmu, headroom_bytes=number(eos.mmu.headroom_bytes)))
    shape = replace(shape, ethernet_interfaces=tuple(
        replace(i, description=i.description and slot(i.description), address=slot(i.address))
        for i in eos.ethernet_interfaces))
    shape = replace(shape, loopback=replace(eos.loopback, address=slot(eos.loopback.address)))
    if eos.management:
        shape = replace(shape, management=replace(eos.management, address=slot(eos.management.address)))
    bgp = eos.router_bgp
    if bgp:
        asn, router_id = number(bgp.asn), slot(bgp.router_id)
        neighbors = tuple(replace(n, address=slot(n.address), remote_as=number(n.remote_as),
                                  description=n.description and slot(n.description)) for n in bgp.neighbors)
        shape = replace(shape, router_bgp=replace(bgp, asn=asn, router_id=router_id, neighbors=neighbors,
                                                  networks=tuple(slot(p) for p in bgp.networks)))
    return shape, values


def split(text: str) -> Split:
    """A shape's text at its sentinels (:data:`Split`)."""
    parts = _SENTINEL.split(text)
    return parts[0::2], [int(n) for n in parts[1::2]]


def fill(pieces: Split, values: list[str], pick: Callable[[list[str]], Any] | None = None) -> str:
    """The shape's text with each sentinel replaced by its value; ``pick`` is :func:`picker` of the pieces,
    when the caller keeps one."""
    texts, order = pieces
    out = [""] * (len(texts) + len(order))  # the shape's text at even places, values at odd ones
    out[0::2] = texts
    out[1::2] = pick(values) if pick is not None else map(values.__getitem__, order)
    return "".join(out)


def picker(pieces: Split) -> Callable[[list[str]], Any]:
    """The values in the pieces' sentinel order, by one C-level ``itemgetter`` (made once per shape), not a
    call per sentinel."""
    order = pieces[1]
    if len(order) == 1:
        only = order[0]
        return lambda values: (values[only],)
    return itemgetter(*order) if order else lambda values: ()


def render_filled(context: RenderContext, key: tuple[Any, ...], values: list[str], name: str,
                  render: Callable[[], str], render_shape: Callable[[], tuple[str, list[str]]]
                  ) -> tuple[str, Split | None]:
    """The text for one config of shape ``key``: filled in from the shape's split, or ``render()`` in full;
    and the split when the text is exactly it filled with ``values`` (what :mod:`fabgen.targets.eos.slots`
    needs to know to vouch for it), else None."""
    shapes: dict[tuple[str, tuple[Any, ...]], Split | None] = context.cache.setdefault("eos-shapes", {})
    if not shipped_templates(context, _templates()):
        return render(), None
    cache_key = (name, key)
    if cache_key in shapes:
        pieces = shapes[cache_key]
        if pieces is None:
            return render(), None
        picks: dict[tuple[str, tuple[Any, ...]], Callable[[list[str]], Any]] = context.cache.setdefault(
            "eos-picks", {})
        pick = picks.get(cache_key)
        if pick is None:
            pick = picks[cache_key] = picker(pieces)
        text = fill(pieces, values, pick)
        if MARK in text:  # a value held the marker: its pieces may be misplaced
            return render(), None
        return text, pieces
    if MARK in "".join(values):
        return render(), None
    text = render()
    shape_text, slots = render_shape()
    pieces = split(shape_text)
    good = slots == values and fill(pieces, values) == text
    shapes[cache_key] = pieces if good else None
    return text, pieces if good else None
