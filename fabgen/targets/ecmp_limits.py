"""The widest ECMP (``maximum-paths``) a switch OS can configure, judged on the planned switches and earlier on
the layout alone.

Shared by the switch OS limits, as :mod:`fabgen.targets.cabling_limits` is: each
OS holds one :class:`EcmpLimit` row (its bound and the command that has it);
the plan limits call :meth:`EcmpLimit.plan_problems`, and the target row's
``layout_limits`` is :meth:`EcmpLimit.layout_problems`, which
:func:`fabgen.plan.build.build_plan` runs right after sizing, before a link
exists (at 200k hosts the links are a minute and gigabytes). Both say the
same thing at the same spec line.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fabgen.errors import Problem
from fabgen.plan.routing import widest_layout_ecmp
from fabgen.source import spec_problem

if TYPE_CHECKING:
    from fabgen.plan.layout import Layout
    from fabgen.plan.model import Switch
    from fabgen.source import SourceDoc
    from fabgen.spec import ClusterSpec


@dataclass(frozen=True)
class EcmpLimit:
    os: str
    """The planned switches' ``os`` it judges (``eos``, ``sonic``, ``cumulus``)."""
    label: str
    most: int
    """The widest ``maximum-paths`` the OS takes."""
    command: str
    """Where the bound lives, in the OS's words (printed with the refusal)."""

    def plan_problems(self, spec: ClusterSpec, doc: SourceDoc | None, switches: Iterable[Switch]) -> list[Problem]:
        """The planned ``switches`` of this OS, their widest ECMP against the bound."""
        return self._problems(spec, doc, max((s.bgp.maximum_paths for s in switches
                                              if s.os == self.os and s.bgp is not None), default=0))

    def layout_problems(self, spec: ClusterSpec, layout: Layout, doc: SourceDoc | None) -> list[Problem]:
        """The same refusal from the layout's numbers (:func:`fabgen.plan.routing.widest_layout_ecmp`), before any
        link is built; nothing where the built plan could still differ."""
        return self._problems(spec, doc, widest_layout_ecmp(spec, layout, self.os))

    def _problems(self, spec: ClusterSpec, doc: SourceDoc | None, widest: int) -> list[Problem]:
        """``widest`` (0: none) against :attr:`most`, at the spec's fixed ``maximum_paths`` or, when the width is
        derived, at the tiers that size it."""
        if widest <= self.most:
            return []
        at = ("fabric", "routing", "maximum_paths") if spec.fabric.routing.maximum_paths else ("fabric", "tiers")
        return [spec_problem(doc, f"maximum-paths {widest} is above {self.label}'s {self.most} ({self.command})", at)]
