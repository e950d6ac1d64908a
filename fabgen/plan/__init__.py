"""Planning: spec -> :class:`FabricPlan` (devices, rails, links, addresses, intents)."""

from __future__ import annotations

from fabgen.plan.build import build_plan
from fabgen.plan.model import FabricPlan, Host, Link, Switch, SwitchPort

__all__ = ["FabricPlan", "Host", "Link", "Switch", "SwitchPort", "build_plan"]
