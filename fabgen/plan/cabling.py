"""Apply the spec's explicit cabling on top of the automatic layout.

A cable in ``fabric.cabling`` replaces every planned link that uses either of
its ends, and takes the first replaced link's place (so addresses of the other
links do not move). It is taken as given: a cable that crosses rails or lands
beyond the radix is planned as written, and the linter reports it.

What no switch OS can take is refused here, at the later cable's line: a port
holds one cable, so two cables with a common end (a switch port, a host NIC, or
the same cable listed twice, either way round) are refused. Without this check
EOS failed only at render time ("'interface ...' repeats line ..."), after
``validate`` had passed, and SONiC and Cumulus wrote both cables to one port.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fabgen.errors import Problem, SpecError
from fabgen.plan.slots import PlannedLink, RawLink
from fabgen.source import SourceDoc, spec_problem
from fabgen.spec import ClusterSpec

if TYPE_CHECKING:
    from fabgen.plan.model import Role
    from fabgen.plan.slots import SwitchSlot

_ROLE: dict[tuple[str, str], Role] = {("host", "leaf"): "host-leaf", ("leaf", "spine"): "leaf-spine", ("spine", "super_spine"): "spine-superspine"}
_RANK = {"host": 0, "leaf": 1, "spine": 2, "super_spine": 3}


class ExplicitCabling:
    def __init__(self, spec: ClusterSpec, doc: SourceDoc | None, host_profiles: dict[str, str],
                 switches: dict[str, SwitchSlot]) -> None:
        self.spec = spec
        self.doc = doc
        self.host_profiles = host_profiles
        self.switches = switches

    def apply(self, raw: list[RawLink]) -> list[RawLink]:
        cables = self.spec.fabric.cabling
        if not cables:
            return raw
        problems = []
        resolved: list[PlannedLink] = []
        for index, cable in enumerate(cables):
            try:
                resolved.append(self._resolve(cable.a, cable.b))
            except ValueError as exc:
                problems.append(self._problem(str(exc), index))
        if problems:
            raise SpecError(problems)
        self._one_cable_per_port(resolved)
        by_end: dict[tuple[str, str], int] = {}
        for position, link in enumerate(raw):
            by_end[(link[0], link[1])] = position
            by_end[(link[2], link[3])] = position
        out: list[RawLink | None] = list(raw)
        appended: list[RawLink] = []
        for link in resolved:
            hits = sorted({by_end[e] for e in ((link[0], link[1]), (link[2], link[3])) if e in by_end})
            planned = [h for h in hits if out[h] is not None and not out[h][7]]  # type: ignore[index]
            for position in planned:
                out[position] = None
            if planned:
                out[planned[0]] = link
            else:
                appended.append(link)
        return [link for link in out if link is not None] + appended

    def _one_cable_per_port(self, resolved: list[PlannedLink]) -> None:
        """Refuse a cable with an end an earlier cable already has, located at the later cable.

        Why here and not in the linter (FG202): every switch OS takes one cable per port, so such a spec is
        wrong whatever it renders to, and ``validate`` must refuse what ``generate`` would (EOS refused it
        only when checking its rendered config, SONiC and Cumulus wrote both cables to the port). A port
        the automatic layout gives another link is not refused: the cable replaces that link (the module's
        rule), and a NIC it leaves uncabled is the linter's FG204, fine when the NIC is out of service.
        One pass, a dict look-up per end: linear in the cables, which may be tens of thousands.
        """
        cabled_by: dict[tuple[str, str], int] = {}
        problems: list[Problem] = []
        for index, link in enumerate(resolved):
            lower, upper = (link[0], link[1]), (link[2], link[3])
            # The higher-tier end first: two cables on one switch port is the clash to name.
            earlier = next(((end, cabled_by[end]) for end in (upper, lower) if end in cabled_by), None)
            if earlier is not None:
                end, first = earlier
                problems.append(self._problem(f"{end[0]}:{end[1]} is already cabled by fabric.cabling[{first}]; "
                                              "a port takes one cable", index))
            cabled_by.setdefault(upper, index)
            cabled_by.setdefault(lower, index)
        if problems:
            raise SpecError(problems)

    def _problem(self, message: str, index: int) -> Problem:
        """A problem at cable ``index``'s line; without the source (a spec built in code), still naming the cable."""
        return spec_problem(self.doc, message, ("fabric", "cabling", index))

    def _kind(self, device: str) -> str:
        if device in self.host_profiles:
            return "host"
        slot = self.switches.get(device)
        if slot is None:
            raise ValueError(f"cable end names {device!r}, which is neither a host nor a planned switch")
        return slot.tier

    def _resolve(self, a: str, b: str) -> PlannedLink:
        (ad, ap), (bd, bp) = a.split(":", 1), b.split(":", 1)
        ak, bk = self._kind(ad), self._kind(bd)
        if _RANK[ak] > _RANK[bk]:
            (ad, ap, ak), (bd, bp, bk) = (bd, bp, bk), (ad, ap, ak)
        role = _ROLE.get((ak, bk))
        if role is None:
            raise ValueError(f"cable {a} -- {b} connects a {ak.replace('_', '-')} to a {bk.replace('_', '-')}; "
                             "fabgen plans host-leaf, leaf-spine and spine-super-spine links")
        tiers = self.spec.fabric.tiers
        if role == "host-leaf":
            profile = self.spec.host_profiles[self.host_profiles[ad]]
            nic = next((n for n in profile.nics if n.netdev == ap), None)
            if nic is None:
                raise ValueError(f"host {ad} has no interface {ap!r} (profile {self.host_profiles[ad]})")
            return PlannedLink(ad, ap, bd, bp, role, nic.rail, min(nic.speed, tiers.leaf.speed), True)
        if role == "leaf-spine":
            return PlannedLink(ad, ap, bd, bp, role, self.switches[ad].rail, min(tiers.leaf.speed, tiers.spine.speed), True)
        assert tiers.super_spine is not None
        return PlannedLink(ad, ap, bd, bp, role, None, min(tiers.spine.speed, tiers.super_spine.speed), True)

