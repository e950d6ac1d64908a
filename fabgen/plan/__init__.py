"""Planning: spec -> :class:`FabricPlan` (devices, rails, links, addresses, intents)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fabgen.plan.build import build_plan
    from fabgen.plan.model import FabricPlan, Host, Link, Switch, SwitchPort

__all__ = ["FabricPlan", "Host", "Link", "Switch", "SwitchPort", "build_plan"]


def __getattr__(name: str) -> Any:
    """The names above, imported on first use (PEP 562).

    Why lazily: ``fabgen.plan.build`` imports the pydantic spec models (a third
    of a second of CPU); a target module importing ``fabgen.plan.model`` for its
    types, or the one-device cache re-checking a cached file, must not pay for it.
    """
    if name == "build_plan":
        from fabgen.plan import build

        return build.build_plan
    if name in __all__:
        from fabgen.plan import model

        return getattr(model, name)
    raise AttributeError(f"module 'fabgen.plan' has no attribute {name!r}")
