"""Build frozen, slotted plan dataclasses in hot loops without their ``__init__``.

Why: a frozen dataclass's ``__init__`` sets each field through
``object.__setattr__`` (its own ``__setattr__`` refuses), about 0.25 us a field;
a 24k-GPU plan builds ~150k switch ports, ~74k links, ~100k host routes and
~25k NICs, each of 4 to 14 fields, so the constructors alone were most of a
second of planning. :func:`maker` returns, for one such class, a mutable twin
class with the very same slots, whose plain ``__init__`` stores the fields
directly; the caller builds a twin and sets its ``__class__`` to the frozen
class (CPython allows that between classes of one slot layout). The result is
an ordinary instance of the frozen class: equal to, hashing like and as
immutable as one built by its constructor. ``tests/plan/test_fast.py`` checks
that against the real constructors. :func:`replaced` is ``dataclasses.replace``
the same way.

The hottest sites (123k switch ports, 98k BGP neighbours, 74k links at 24k
GPUs) take an empty twin from :func:`blank` and set its slots by name: no call
that binds every argument, a third cheaper, and the field names are on the page.
A slot one forgets stays unset, and reading it (``==``, ``repr``, every target)
raises AttributeError; ``tests/plan/test_fast.py`` checks every planned port,
link and neighbour has all.

Only for values the planner made from validated data: the twin runs no
``__post_init__`` (:func:`maker` refuses a class that has one, so no check can
be skipped) and takes every field positionally, defaults included, so a field
added to the frozen class breaks the hot loop loudly instead of silently
taking its default.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import cache
from operator import attrgetter
from typing import Any, TypeVar

T = TypeVar("T")


@cache
def maker(cls: type, *, copies_checked: bool = False) -> type:
    """The mutable twin of frozen slotted dataclass ``cls``: ``obj = Twin(*every_field); obj.__class__ = cls``.

    ``copies_checked``: accept a class with ``__post_init__``, for a caller that only copies an instance its
    constructor already checked and checks the fields it changes itself (``HostNicIntent.for_host``).
    """
    names = _checked_fields(cls, copies_checked)
    # The plain positional __init__ of a non-frozen dataclass with these fields (``self.name = name`` each),
    # taken from a throwaway one: the twin itself must be the subclass _twin_class makes.
    fields: list[tuple[str, Any]] = [(name, Any) for name in names]
    init = dataclasses.make_dataclass(f"_{cls.__name__}Fields", fields, slots=True, eq=False, repr=False).__dict__["__init__"]
    return _twin_class(cls, "Twin", init)


@cache
def _blank_twin(cls: type) -> type:
    """The twin :func:`blank` makes: :func:`maker`'s without an ``__init__``, so ``Twin()`` is one C call."""
    _checked_fields(cls, False)
    return _twin_class(cls, "Blank", object.__init__)


def _checked_fields(cls: type, copies_checked: bool) -> list[str]:
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__} is not a frozen dataclass with slots")
    if hasattr(cls, "__post_init__") and not copies_checked:
        raise TypeError(f"{cls.__name__} checks its fields in __post_init__; build it with its constructor")
    names = [f.name for f in dataclasses.fields(cls)]
    if tuple(names) != tuple(cls.__dict__["__slots__"]):
        raise TypeError(f"{cls.__name__}'s slots are not its fields in order")
    return names


def _twin_class(cls: type, kind: str, init: Any) -> type:
    """A subclass of ``cls`` that adds no slot and takes assignments (``object.__setattr__``, which CPython then
    runs as its C setter, with the slot stores of the hot loops specialised).

    Why a subclass rather than a class of its own with the same slots: ``obj.__class__ = cls`` then finds
    both classes share their slot layout by walking up from the twin to ``cls`` itself, where two unrelated
    classes are compared slot name by slot name; that comparison was most of what setting ``__class__``
    cost, on ~450k objects at 24k GPUs.
    """
    namespace = {"__slots__": (), "__setattr__": object.__setattr__, "__delattr__": object.__delattr__,
                 "__init__": init, "__module__": cls.__module__, "__qualname__": f"_{cls.__name__}{kind}"}
    twin: type = type(f"_{cls.__name__}{kind}", (cls,), namespace)
    return twin


def blank(cls: type) -> Callable[[], Any]:
    """A maker of empty twins of ``cls``: ``obj = new(); obj.field = ...`` for every field; ``obj.__class__ = cls``."""
    return _blank_twin(cls)


def replaced(obj: T, **changes: Any) -> T:
    """``dataclasses.replace(obj, **changes)`` for a class :func:`maker` accepts, without the ``__init__``."""
    cls: type = type(obj)
    item = maker(cls)(*_values(cls)(obj))  # a mutable copy; then the changes, on it
    for name, value in changes.items():
        if name not in cls.__slots__:  # type: ignore[attr-defined]
            raise TypeError(f"{cls.__name__} has no field {name!r}")
        setattr(item, name, value)
    item.__class__ = cls
    return item  # type: ignore[no-any-return]


@cache
def _values(cls: type) -> Callable[[Any], tuple[Any, ...]]:
    """Every field of a ``cls`` instance, in order, in one C call."""
    names: tuple[str, ...] = cls.__slots__  # type: ignore[attr-defined]
    if len(names) == 1:  # attrgetter of one name gives the value itself, not a 1-tuple
        return lambda obj: (getattr(obj, names[0]),)
    return attrgetter(*names)
