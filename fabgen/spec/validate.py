"""pydantic errors -> located, one-line problems (with did-you-mean for typos)."""

from __future__ import annotations

import difflib
import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError

from fabgen.errors import Problem, SpecError
from fabgen.source import DataPath, SourceDoc
from fabgen.spec.cluster import ClusterSpec
from fabgen.spec.input_checks import check_silent, leading_zero_problems, pattern_message, raw_nccl_problems
from fabgen.spec.references import check_references


def validate_spec(doc: SourceDoc) -> ClusterSpec:
    """Validate the document; raise :class:`SpecError` listing every problem."""
    zeros = leading_zero_problems(doc)
    try:
        spec = ClusterSpec.model_validate(doc.data)
    except ValidationError as exc:
        # every problem at once: NCCL variables are checked on the raw data too
        raise SpecError(_sorted(_unique([*_problems(doc, exc), *raw_nccl_problems(doc), *zeros]))) from None
    problems = [*check_references(spec, doc), *check_silent(spec, doc), *zeros]
    if problems:
        raise SpecError(_unique(problems))
    spec._source = doc
    if spec.fabric.ipam is not None:
        from fabgen.spec.ipam import read_ipam

        spec._ipam = read_ipam(doc, spec.fabric.ipam)
    return spec


def _unique(problems: list[Problem]) -> list[Problem]:
    """The same problem found twice (by pydantic and by the raw NCCL check) is printed once."""
    return list(dict.fromkeys(problems))


def _sorted(problems: list[Problem]) -> list[Problem]:
    return sorted(problems, key=lambda p: (p.line == 0, p.line, p.col))


def _problems(doc: SourceDoc, exc: ValidationError) -> list[Problem]:
    found: list[tuple[DataPath, bool, str, bool]] = []
    for error in exc.errors(include_url=False, include_context=True, include_input=False):
        path, tagged = _data_path(doc.data, error["loc"])
        kind = error["type"]
        message = str(error["msg"]).removeprefix("Value error, ")
        if kind == "string_pattern_mismatch":
            message = pattern_message(str(error.get("ctx", {}).get("pattern", ""))) or message
        if kind == "extra_forbidden":
            message = f"unknown key {path[-1]!r}" + _suggestion(path)
        elif kind == "missing":
            field = error["loc"][-1]
            message = f"missing required key {field!r}"
        found.append((path, kind == "extra_forbidden", message, tagged))

    # A union reports one error per branch; keep the branch that got furthest.
    deepest = {p for p, *_ in found}
    problems: list[Problem] = []
    seen: set[tuple[DataPath, str]] = set()
    merged: dict[DataPath, list[str]] = {}
    order: list[tuple[DataPath, bool]] = []
    for path, at_key, message, tagged in found:
        if tagged and any(len(other) > len(path) and other[: len(path)] == path for other in deepest):
            continue
        if (path, message) in seen:
            continue
        seen.add((path, message))
        if path not in merged:
            merged[path] = []
            order.append((path, at_key))
        merged[path].append(message)
    for path, at_key in order:
        message = "; or ".join(merged[path]) if len(merged[path]) > 1 else merged[path][0]
        problems.append(doc.problem(message, path, key=at_key))
    problems.sort(key=lambda p: (p.line, p.col))
    return problems


def _data_path(data: Any, loc: tuple[Any, ...]) -> tuple[DataPath, bool]:
    """Keep the parts of pydantic's ``loc`` that exist in the data (drop union tags)."""
    path: list[str | int] = []
    node = data
    tagged = False
    for index, part in enumerate(loc):
        if (isinstance(node, dict) and part in node) or (
                isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)):
            path.append(part)
            node = node[part]
        elif index == len(loc) - 1 and isinstance(node, dict):
            path.append(part)  # a missing key: point at its parent, name it in the path
            node = None
        else:
            tagged = True
    return tuple(path), tagged


def _suggestion(path: DataPath) -> str:
    known = _known_keys(path[:-1])
    if not known:
        return ""
    close = difflib.get_close_matches(str(path[-1]), sorted(known), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else f" (expected one of: {', '.join(sorted(known))})"


def _known_keys(path: DataPath) -> set[str]:
    """Field names of the model found at ``path`` by following type annotations."""
    annotation: Any = ClusterSpec
    for part in path:
        annotation = _step(annotation, part)
        if annotation is None:
            return set()
    model = _as_model(annotation)
    return set(model.model_fields) if model else set()


def _unwrap(annotation: Any) -> list[Any]:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [t for arg in typing.get_args(annotation) for t in _unwrap(arg)]
    return [annotation]


def _as_model(annotation: Any) -> type[BaseModel] | None:
    for option in _unwrap(annotation):
        if isinstance(option, type) and issubclass(option, BaseModel):
            return option
    return None


def _step(annotation: Any, part: str | int) -> Any:
    for option in _unwrap(annotation):
        if isinstance(option, type) and issubclass(option, BaseModel) and isinstance(part, str):
            field = option.model_fields.get(part)
            if field is not None:
                return field.annotation if not field.metadata else typing.Annotated[field.annotation, *field.metadata]
        origin = typing.get_origin(option)
        if origin is list and isinstance(part, int):
            return typing.get_args(option)[0]
        if origin is dict and isinstance(part, str):
            return typing.get_args(option)[1]
    return None
