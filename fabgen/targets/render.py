"""Render the chosen targets for the chosen devices, check every file, in one or several processes."""

from __future__ import annotations

import os
import traceback
from collections.abc import Generator, ItemsView, Iterable, Iterator, KeysView, Mapping, Sequence, ValuesView
from operator import itemgetter
from pathlib import Path
from typing import Any

from jinja2 import TemplateError, TemplateNotFound, TemplateSyntaxError

from fabgen._gc import paused_gc
from fabgen.errors import OutputError, Problem
from fabgen.forked import can_fork, forked_slices, slices
from fabgen.plan import FabricPlan
from fabgen.targets.base import RenderContext, Target
from fabgen.targets.base import Rendered as Rendered
from fabgen.targets.environment import environment
from fabgen.targets.registry import device_matches, devices_of, select_targets
from fabgen.targets.template_cache import template_cache


def render_files(
    plan: FabricPlan,
    target_names_: Iterable[str] | None = None,
    devices: Sequence[str] | None = None,
    templates: Path | None = None,
    jobs: int = 1,
) -> tuple[dict[str, str], Owners]:
    """Render the chosen targets for the chosen devices: ``({path: text}, {path: (target, device)})``.

    ``jobs > 1`` renders in that many forked worker processes; the result is the
    same bytes in the same order as with one process.
    """
    rows: list[Rendered] = []
    # Paused to the end, sort included, and promoted: the sort's tuples, or the caller's next allocation,
    # would otherwise start a collection that walks everything the render allocated (and at times the plan).
    with paused_gc(promote=True):
        for batch in render_stream(plan, target_names_, devices, templates, jobs):
            rows.extend(batch)
        # One stable sort of the rows by path, then the files in that order: the same files, order and owners
        # as filling them in render order and sorting the files after (a path produced twice keeps its last
        # text). The owners are filled only if read (Owners): at 2,048 small files the two fills had cost as
        # much as the render.
        rows.sort(key=_path)
        return {path: text for path, text, _ in rows}, Owners(rows)


_path = itemgetter(0)


class Owners(Mapping[str, tuple[str, str]]):
    """``{path: (target, device)}`` of one :func:`render_files` call, in path order, filled when first read.

    Why: ``generate``, ``generate --check`` and a library's ``render_fabric``
    never read it, and filling a second dict of every path had cost a
    2,048-switch target as much as its render. Until it is read it holds the
    render's rows (their texts are the files' own objects); a path produced twice
    is owned by its last producer, as its text is.
    """

    __slots__ = ("_rows", "_table")

    def __init__(self, rows: list[Rendered]) -> None:
        self._rows: list[Rendered] | None = rows
        self._table: dict[str, tuple[str, str]] = {}

    def _owners(self) -> dict[str, tuple[str, str]]:
        if self._rows is not None:
            self._table = {path: owner for path, _, owner in self._rows}
            self._rows = None
        return self._table

    def __getitem__(self, path: str) -> tuple[str, str]:
        return self._owners()[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._owners())

    def __len__(self) -> int:
        return len(self._owners())

    def __contains__(self, path: object) -> bool:
        return path in self._owners()

    def get(self, path: str, default: Any = None) -> Any:  # the dict's own, not Mapping's Python loop
        return self._owners().get(path, default)

    def keys(self) -> KeysView[str]:
        return self._owners().keys()

    def items(self) -> ItemsView[str, tuple[str, str]]:
        return self._owners().items()

    def values(self) -> ValuesView[tuple[str, str]]:
        return self._owners().values()


def render_stream(
    plan: FabricPlan,
    target_names_: Iterable[str] | None = None,
    devices: Sequence[str] | None = None,
    templates: Path | None = None,
    jobs: int = 1,
) -> Generator[list[Rendered], None, None]:
    """:func:`render_files` as batches (a device's files, or a worker's slice) in render order, as they are made.

    A consumer that writes each batch away holds one batch, not the whole output
    (several GB at 262,144 GPUs). Problems are collected over the whole run and
    raised as one :class:`OutputError` after the last batch, so the consumer must
    drain the stream (and refuse, not swap in, what it got) to see them; that is
    the same error, in the same order, that :func:`render_files` raises.
    A path produced twice keeps its last text, as :func:`render_files` does.
    """
    work: Work = []
    for target in select_targets(target_names_):
        pairs = devices_of(plan, target)
        work.append((target, pairs if not devices else [pair for pair in pairs if device_matches(pair[0], devices)]))
    problems: list[Problem] = []
    with paused_gc():
        if jobs > 1 and sum(len(pairs) for _, pairs in work) >= PARALLEL_THRESHOLD and can_fork():
            for batch, found in _render_parallel(plan, work, templates, jobs):
                problems.extend(found)
                yield batch
        else:
            yield from _render_batches(plan, work, templates, problems)
    if problems:
        raise OutputError(problems)


PARALLEL_THRESHOLD = 64
"""Below this many device renders, forking workers costs more than it saves."""

_BATCH = 256
"""Device renders per worker task, and per ``render_many`` call: small enough that the parent holds a few batches,
not a large share of the output."""

_Chunk = tuple[list[Rendered], list[Problem]]

Work = list[tuple[Target, list[tuple[str, Any]]]]
"""Each chosen target with the (device name, device) pairs it renders, in render order.

Grouped by target rather than one row per device render: building and
walking a row per device was most of a 2,048-switch target that costs 1 ms.
"""


def _render_batches(plan: FabricPlan, work: Work, templates: Path | None,
                    problems: list[Problem]) -> Iterator[list[Rendered]]:
    """One batch per device render (per :data:`_BATCH` devices of a target with ``render_many``), problems appended
    to ``problems`` (each template failure once)."""
    context = RenderContext(plan=plan, env=environment(templates))
    for target, pairs in work:
        if target.render_many is None:
            yield from _render_one_by_one(context, target, pairs, templates, problems)
            continue
        for start in range(0, len(pairs), _BATCH):
            chunk = pairs[start:start + _BATCH]
            try:
                many = target.render_many(context, chunk)
            except Exception:  # the reference path below says what went wrong, as it always has
                many = None
            if many is None:
                yield from _render_one_by_one(context, target, chunk, templates, problems)
            else:
                problems.extend(many[1])
                yield many[0]
    template_cache.store_bundles()  # what this render compiled or read from entries, for the next process


def _render_one_by_one(context: RenderContext, target: Target, pairs: list[tuple[str, Any]], templates: Path | None,
                       problems: list[Problem]) -> Iterator[list[Rendered]]:
    for name, device in pairs:
        try:
            produced = target.render(context, device)
        except Exception as exc:
            problem = template_problem(exc, target.name, templates)
            if problem is None:
                raise  # not a template's doing: a bug in fabgen, keep its traceback
            if problem not in problems:  # the same template line fails once per device: say it once
                problems.append(problem)
            continue
        owner = (target.name, name)
        check = target.check
        if check is not None:
            for path, text in produced.items():
                problems.extend(check(path, text))
        yield [(path, text, owner) for path, text in produced.items()]


def _render_chunk(plan: FabricPlan, work: Work, templates: Path | None) -> _Chunk:
    problems: list[Problem] = []
    batch = [item for part in _render_batches(plan, work, templates, problems) for item in part]
    return batch, problems


def template_problem(exc: Exception, target: str, user_templates: Path | None) -> Problem | None:
    """``template:line: template error: ...`` for an exception raised while a template rendered.

    Jinja2 rewrites the traceback of any error raised during rendering so that it
    ends in frames of the template files (a ``__jinja_exception__`` global marks
    them); the innermost one names the template and line at fault. A
    :class:`TemplateError` (undefined name, sandbox refusal, syntax, missing
    include) is always the template's; any other exception (``1/0``, runaway
    recursion) only when it was raised in the user's overlay.
    """
    where: tuple[str, int] | None = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if "__jinja_exception__" in frame.f_globals:
            where = (frame.f_code.co_filename, lineno)
    if isinstance(exc, TemplateSyntaxError) and exc.filename:
        where = (exc.filename, exc.lineno)
    if not isinstance(exc, TemplateError):
        overlay = os.path.abspath(user_templates) + os.sep if user_templates is not None else None
        if where is None or overlay is None or not os.path.abspath(where[0]).startswith(overlay):
            return None
    if where is None:
        where = (getattr(exc, "filename", None) or getattr(exc, "name", None) or target, getattr(exc, "lineno", 0) or 0)
    kind = ("no such template: " if isinstance(exc, TemplateNotFound)
            else "" if isinstance(exc, TemplateError) else f"{type(exc).__name__}: ")
    return Problem(f"template error: {kind}{exc}", file=str(where[0]), line=where[1] or 0)


def _render_slice(inputs: tuple[FabricPlan, Work, Path | None], low: int, high: int) -> _Chunk:
    plan, work, templates = inputs
    return _render_chunk(plan, _slice(work, low, high), templates)


def _slice(work: Work, low: int, high: int) -> Work:
    """The device renders at positions ``low`` to ``high`` of the work laid end to end, still grouped by target."""
    part: Work = []
    for target, pairs in work:
        if low < len(pairs) and high > 0:
            part.append((target, pairs[max(low, 0):high]))
        low, high = low - len(pairs), high - len(pairs)
    return part


def _render_parallel(plan: FabricPlan, work: Work, templates: Path | None, jobs: int) -> Iterator[_Chunk]:
    """Workers that inherit the plan (no pickling of it); chunks come back in order, each as soon as it is done."""
    total = sum(len(pairs) for _, pairs in work)
    return forked_slices(_render_slice, (plan, work, templates), slices(total, jobs, most=_BATCH), jobs)
