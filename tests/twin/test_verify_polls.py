"""The verify polls, without root or FRR: a bgpd that has not answered yet is asked again, never a crash.

While 48 bgpd converge on 2 cores, one ``vtysh`` can take longer than its
time; ``fabgen twin run`` of the 128-host pod used to stop there ("vtysh did
not finish within 10 s") instead of asking again until the check's deadline.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from typing import Any

import pytest

from fabgen.twin import system, verify
from fabgen.twin.state import TwinState

EXPECTED = verify.Expectations(neighbors={"t-0": ("10.0.0.1", "10.0.0.3"), "t-1": ("10.0.0.0",)},
                               leaf_uplinks={}, leaf_subnets={}, pairs=(), nic_ifname={}, uplink_port={},
                               nic_mtu={})
STATE = TwinState(prefix="t", spec="spec.yaml", spec_sha256="0" * 64)


def _summary(*established: str) -> str:
    return json.dumps({"ipv4Unicast": {"peers": {a: {"state": "Established"} for a in established}}})


@pytest.fixture(autouse=True)
def _no_tcp_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(verify, "_wait_for_tcp", lambda exp, deadline: None)  # reads /proc in each netns


def _vtysh(answers: dict[str, list[str | None]], calls: list[str]) -> Any:
    """A fake ``system.run`` for vtysh: per netns, its answers in turn (None: it does not finish in time)."""
    def run(argv: Sequence[str], *, timeout: float, check: bool = True, **_: object) -> Any:
        netns = str(argv[2]).rsplit("/", 1)[-1]
        calls.append(netns)
        queue = answers[netns]
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        if answer is None:
            raise system.CommandTimeout(f"vtysh did not finish within {timeout:g} s")
        return subprocess.CompletedProcess(list(argv), 0, answer, "")
    return run


def test_a_bgpd_slow_to_answer_is_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    answers: dict[str, list[str | None]] = {"t-0": [None, None, _summary("10.0.0.1", "10.0.0.3")],
                                            "t-1": [_summary("10.0.0.0")]}
    monkeypatch.setattr(system, "run", _vtysh(answers, calls))
    check = verify.check_sessions(EXPECTED, STATE, timeout=30)
    assert check.ok and check.passed == check.expected == 3 and check.failures == []
    assert calls.count("t-0") == 3


def test_a_bgpd_that_never_answers_fails_the_check_at_its_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(system, "run", _vtysh({"t-0": [None], "t-1": [_summary("10.0.0.0")]}, calls))
    check = verify.check_sessions(EXPECTED, STATE, timeout=0.3)
    assert not check.ok and check.passed == 1
    assert check.failures == ["t-0 neighbor 10.0.0.1: absent", "t-0 neighbor 10.0.0.3: absent"]
    assert calls.count("t-0") >= 2  # polled, not given up after one slow answer


def test_other_failures_of_vtysh_still_stop_the_twin(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(argv: Sequence[str], **_: object) -> Any:
        raise system.TwinError("vtysh: not installed")
    monkeypatch.setattr(system, "run", missing)
    with pytest.raises(system.TwinError, match="not installed"):
        verify.check_sessions(EXPECTED, STATE, timeout=0.3)
