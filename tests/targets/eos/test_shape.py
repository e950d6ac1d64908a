"""The shape check (:mod:`fabgen.targets.eos.shape`) answers exactly as the full check, on real and broken text.

The shape path returns "no problems" without walking a text whose shape passed
once; these tests break real configs and sessions in many ways, after their
shapes are known good, and require the same problems as the full walk.
"""

from __future__ import annotations

import random
import re

import pytest
from conftest import ROOT

from fabgen.targets.eos import check
from fabgen.targets.eos.shape import SESSION_PASSES, shape

SWITCHES = ROOT / "tests" / "golden" / "lab" / "switches"


def _fleet(count: int) -> list[tuple[str, str, str]]:
    """``count`` (name, cfg, session) made from one real leaf: own hostname, addresses, ASN and session name."""
    cfg = (SWITCHES / "leaf-r0-p00-01.cfg").read_text()
    session = (SWITCHES / "leaf-r0-p00-01.session").read_text()
    name = re.search(r"configure session (\S+)", session)
    assert name
    fleet = []
    for n in range(count):
        def vary(text: str, n: int = n) -> str:
            text = text.replace("leaf-r0-p00-01", f"leaf-r{n % 8}-p{n // 8:02d}-01")
            text = re.sub(r"\b10\.(\d+)\.(\d+)\.(\d+)", lambda m: f"10.{m[1]}.{(int(m[2]) + n) % 256}.{m[3]}", text)
            return re.sub(r"(router bgp|remote-as) (\d+)", lambda m: f"{m[1]} {int(m[2]) + n}", text)
        fleet.append((f"leaf{n}", vary(cfg), vary(session).replace(name[1], f"fabgen-{n:012x}")))
    return fleet


def test_a_fleet_is_one_shape() -> None:
    fleet = _fleet(64)
    assert len({shape(cfg) for _, cfg, _ in fleet}) == 1
    assert len({shape(session, SESSION_PASSES) for _, _, session in fleet}) == 1
    assert len({cfg for _, cfg, _ in fleet}) == 64


def test_every_golden_file_is_clean_both_ways() -> None:
    for path in sorted(SWITCHES.glob("*.cfg")) + sorted(SWITCHES.glob("*.session")):
        text = path.read_text()
        assert check.check_eos_config(path.name, text) == check.full_check(path.name, text) == []


PLANTED = [  # (a line's pattern, what replaces it): each a fault the full check reports
    (r"ip address 10\.10\.(\d+)\.0/31", r"ip address 10.10.\1.256/31"),
    (r"ip address 10\.10\.(\d+)\.2/31", r"ip address 10.10.\1.02/31"),
    (r"ip address 10\.10\.(\d+)\.4/31", r"ip address 10.10.\1.4/33"),
    (r"ip address 192\.0\.2\.5/24", "ip address 192.0.2.0/24"),
    (r"ip address 192\.0\.2\.5/24", "ip address 192.0.2.255/24"),
    (r"ip address 10\.255\.(\d+)\.1/32", r"ip address 10.255.\1.1/31"),
    (r"network 10\.10\.(\d+)\.0/31", r"network 10.10.\1.1/31"),
    (r"remote-as 42000(\d+)", "remote-as 0"),
    (r"remote-as 42000(\d+)", "remote-as 4294967296"),
    (r"router bgp (\d+)", r"router bgp 0\1"),
    (r"neighbor (\S+) activate", "neighbor 10.9.9.9 activate"),
    (r"neighbor (\S+) remote-as (\d+)", r"neighbor 10.9.9.9 remote-as \2"),
    (r"neighbor (\S+) description (\S+)", r"neighbor 10.9.9.9 description \2"),
    (r"   description (\S+)\n(.*)\n", "   description \\1\n   description \\1\n"),
    (r"   description (\S+)", r"   description \1?"),
    (r"   description (\S+)", r"   description \1 "),
    (r"neighbor (\S+) description (\S+)", r"neighbor \1 description \2 bfd interval 50"),
    (r"hostname (\S+)", r"hostname -\1"),
    (r"router-id 10\.", "router-id 300."),
    (r"! fabgen: (.*)\n! generated", "! fabgen:\t\\1\n! generated"),
]


@pytest.mark.parametrize(("pattern", "fault"), PLANTED, ids=[fault for _, fault in PLANTED])
def test_a_planted_fault_in_a_known_shape_is_found(pattern: str, fault: str) -> None:
    fleet = _fleet(3)
    for name, cfg, session in fleet[:2]:  # the shapes are known good before the fault
        assert check.check_eos_config(f"{name}.cfg", cfg) == []
        assert check.check_eos_config(f"{name}.session", session) == []
    name, cfg, session = fleet[2]
    for path, text in ((f"{name}.cfg", cfg), (f"{name}.session", session)):
        broken = re.sub(pattern, fault, text, count=1)
        assert broken != text, pattern
        if path.endswith(".session"):
            check.check_eos_config(f"{name}.cfg", cfg)  # the session's config, checked first as the renderer does
        full = check.full_check(path, broken)
        assert full, broken
        assert check.check_eos_config(path, broken) == full


def test_random_edits_get_the_full_checks_answer() -> None:
    """Thousands of one-character edits of known-good shapes: whatever the full check says, the shape check says."""
    rng = random.Random(17)
    fleet = _fleet(4)
    for name, cfg, session in fleet[:3]:
        assert check.check_eos_config(f"{name}.cfg", cfg) == []
        assert check.check_eos_config(f"{name}.session", session) == []
    name, cfg, session = fleet[3]
    alphabet = "0123456789./ -abfdx?\t\n!"
    found = 0
    for trial in range(1500):
        base, path = (cfg, f"{name}.cfg") if trial % 2 else (session, f"{name}.session")
        at = rng.randrange(len(base))
        edit = rng.choice(("replace", "insert", "delete"))
        char = rng.choice(alphabet)
        text = (base[:at] + char + base[at + 1:] if edit == "replace" else
                base[:at] + char + base[at:] if edit == "insert" else base[:at] + base[at + 1:])
        if path.endswith(".session"):
            check.check_eos_config(f"{name}.cfg", cfg)
        full = check.full_check(path, text)
        assert check.check_eos_config(path, text) == full, (path, at, edit, char)
        found += bool(full)
    assert found > 300  # most edits break something: the test exercises the failing path, not only clean ones


def test_a_neighbour_line_around_a_sessions_config_is_numbered_with_it() -> None:
    """A session whose own lines hold ``neighbor`` is shaped as one text: the BGP rules compare across it."""
    fleet = _fleet(2)
    for name, cfg, session in fleet:
        assert check.check_eos_config(f"{name}.cfg", cfg) == []
        assert check.check_eos_config(f"{name}.session", session) == []
    name, cfg, session = fleet[1]
    check.check_eos_config(f"{name}.cfg", cfg)
    broken = session.replace("show session-config diffs", "   neighbor 10.7.7.7 bfd\nshow session-config diffs")
    full = check.full_check(f"{name}.session", broken)
    assert full
    assert check.check_eos_config(f"{name}.session", broken) == full


@pytest.mark.parametrize("fault", ["! fabgen:\tx", "! what?", "!  trailing ", "configure terminal"])
def test_a_sessions_own_lines_are_checked(fault: str) -> None:
    """The lines around the config (title, how to commit) are checked too, by either path."""
    fleet = _fleet(2)
    for name, cfg, session in fleet:
        check.check_eos_config(f"{name}.cfg", cfg)
        assert check.check_eos_config(f"{name}.session", session) == []
    name, cfg, session = fleet[1]
    for at in (0, -2):  # the first line (the title) and the last comment before 'end'
        lines = session.split("\n")
        lines[at - 1 if at < 0 else at] = fault
        broken = "\n".join(lines)
        check.check_eos_config(f"{name}.cfg", cfg)
        full = check.full_check(f"{name}.session", broken)
        assert full, broken
        assert check.check_eos_config(f"{name}.session", broken) == full
