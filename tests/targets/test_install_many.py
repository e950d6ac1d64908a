"""install: the batch renders (``render_many``) give exactly the per-device render and check, faults planted.

The batch paths skip :func:`~fabgen.targets.install_check.check_install_map`
for a list proved by its shape; these tests plant faults in the entries (in
every list, in some, or only in the shape) and compare the rows and problems
with the per-device path, where every list is checked in full.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from fabgen.errors import Problem
from fabgen.pipeline import load_spec, plan_fabric
from fabgen.plan import FabricPlan
from fabgen.targets import install, install_check
from fabgen.targets import render as render_module
from fabgen.targets.base import RenderContext, Rendered, Target
from fabgen.targets.environment import environment
from fabgen.targets.registry import devices_of
from tests.helpers import EXAMPLE_NAMES, example

Entries = list[dict[str, str]]


def _both(plan: FabricPlan, target: Target) -> tuple[tuple[list[Rendered], list[Problem]],
                                                     tuple[list[Rendered], list[Problem]]]:
    """(rows, problems) by ``render_many`` in batches of ``_BATCH``, then device by device with the full check."""
    assert target.render_many is not None
    results = []
    for chosen in (target, dataclasses.replace(target, render_many=None)):
        problems: list[Problem] = []
        rows = [row for batch in render_module._render_batches(plan, [(chosen, devices_of(plan, chosen))], None,
                                                               problems) for row in batch]
        results.append((rows, problems))
    return results[0], results[1]


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """Empty shape caches for the test (restored after), so a planted fault is never judged by an earlier verdict."""
    monkeypatch.setattr(install_check, "_PASSED", set())
    monkeypatch.setattr(install, "_SWITCH_SHAPES", {})
    monkeypatch.setattr(install, "_PROVED_PARTS", {})
    monkeypatch.setattr(install, "_HOST_SHAPES", {})


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
@pytest.mark.parametrize("target", [install.HOST_TARGET, install.SWITCH_TARGET], ids=lambda t: t.name)
def test_batch_render_is_the_per_device_render(name: str, target: Target, fresh: None) -> None:
    plan = plan_fabric(load_spec(example(name)))
    many, one = _both(plan, target)
    assert many == one and one[1] == [] and many[0]


def _set(index: int, key: str, value: str) -> Callable[[Entries, str], Entries]:
    def fault(entries: Entries, name: str) -> Entries:
        return [dict(e, **{key: value}) if i == index else e for i, e in enumerate(entries)]
    return fault


FAULTS: dict[str, Callable[[Entries, str], Entries]] = {
    "mode": _set(0, "mode", "4755"),
    "dest-dotdot": _set(0, "dest", "/mnt/../etc/shadow"),
    "dest-relative": _set(0, "dest", "etc/x"),
    "source-outside": _set(0, "source", "../etc/passwd"),
    "repeated-dest": lambda entries, name: [*entries, entries[0]],
    "quote-in-then": _set(0, "then", 'say "hi"'),  # passes the check, but is printed by json.dumps, escaped
    "non-ascii-then": _set(0, "then", "caf\u00e9"),
    "at-sign": _set(0, "then", "mail root@host"),  # an "@" of its own: no shape
    "newline-in-then": _set(0, "then", "a\nb"),
    "entry-in-then": _set(0, "then", 'x", "dest": "/etc/y'),
    "empty": lambda entries, name: [],
}


def _only_some(fault: Callable[[Entries, str], Entries]) -> Callable[[Entries, str], Entries]:
    """The fault in the lists of some devices (names ending in 1 or 5) and in the ``@`` shape, not the others."""
    return lambda entries, name: fault(entries, name) if name == "@" or name.endswith(("1", "5")) else entries


def _only_shape(fault: Callable[[Entries, str], Entries]) -> Callable[[Entries, str], Entries]:
    return lambda entries, name: fault(entries, name) if name == "@" else entries


@pytest.mark.parametrize("where", ["all", "some", "shape"])
@pytest.mark.parametrize("fault", FAULTS, ids=str)
@pytest.mark.parametrize("name", ["lab", "cumulus-pod", "sonic-pod"])
def test_a_planted_switch_fault_gives_the_full_checks_problems(name: str, fault: str, where: str, fresh: None,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    planted = {"all": FAULTS[fault], "some": _only_some(FAULTS[fault]), "shape": _only_shape(FAULTS[fault])}[where]
    real = install._switch_entries
    monkeypatch.setattr(install, "_switch_entries", lambda os, device: planted(real(os, device), device))
    plan = plan_fabric(load_spec(example(name)))
    many, one = _both(plan, install.SWITCH_TARGET)
    assert many == one
    if fault in ("mode", "dest-dotdot", "dest-relative", "source-outside", "repeated-dest") and where == "all":
        assert len({p.file for p in one[1]}) == len(one[0]) > 0  # every list refused, each by its own path


@pytest.mark.parametrize("where", ["all", "some"])
@pytest.mark.parametrize("fault", FAULTS, ids=str)
def test_a_planted_host_fault_gives_the_full_checks_problems(fault: str, where: str, fresh: None,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    planted = {"all": FAULTS[fault], "some": _only_some(FAULTS[fault])}[where]
    real = install.host_entries
    monkeypatch.setattr(install, "host_entries", lambda plan, host: planted(real(plan, host), host.name))
    plan = plan_fabric(load_spec(example("lab")))
    many, one = _both(plan, install.HOST_TARGET)
    assert many == one
    if fault in ("mode", "dest-dotdot", "dest-relative", "source-outside", "repeated-dest"):
        assert {p.file for p in one[1]} == {path for path, _, _ in one[0] if where == "all" or path[-14] in "15"}


def test_a_host_whose_name_is_in_the_lists_literals_gets_the_per_host_bytes(fresh: None) -> None:
    """A host called ``etc`` or ``hosts``: its name replaced by ``@`` is another shape, proved (or not) on its own."""
    plan = plan_fabric(load_spec(example("lab")))
    host = plan.hosts[0]
    context = RenderContext(plan=plan, env=environment())
    for name in ("etc", "hosts", "netplan", "lab01", "0644", "nccl"):
        renamed = dataclasses.replace(host, name=name)
        rows, problems = install._render_hosts(context, [(h.name, h) for h in (host, renamed, renamed)]) or ([], [])
        expected = [(path, text, ("install-hosts", h.name)) for h in (host, renamed, renamed)
                    for path, text in install._render_host(context, h).items()]
        assert rows == expected and problems == [], name


@pytest.mark.parametrize("names", [["a", "b\nc"], ["a", ""], ["a", "b c"], ["a", "x@y"], ["-a"], ["a/b"], [".."],
                                   ["a", "\u00e9"]])
def test_an_unsafe_name_sends_the_batch_the_per_device_way(names: list[str]) -> None:
    assert not install_check.all_safe(names)
    context: Any = SimpleNamespace(plan=None)
    pairs: Any = [(n, SimpleNamespace(name=n, os="eos")) for n in names]
    assert install._render_switches(context, pairs) is None
    assert install._render_hosts(context, pairs) is None


def test_safe_names_pass_in_one_regex_pass() -> None:
    assert install_check.all_safe(["leaf-r0-p00-01", "spine.1", "A_b", "9"])


def test_render_files_keeps_the_last_text_of_a_path_given_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one sort of rows by path is stable: the last text of a repeated path wins, in path order, as before."""
    def stream(*args: Any, **kwargs: Any) -> Any:
        yield [("b", "1", ("t", "x")), ("a", "2", ("t", "x"))]
        yield [("b", "3", ("u", "y")), ("c", "4", ("t", "z"))]

    monkeypatch.setattr(render_module, "render_stream", stream)
    files, owners = render_module.render_files(plan_fabric(load_spec(example("lab"))))
    assert list(files.items()) == [("a", "2"), ("b", "3"), ("c", "4")]
    assert owners == {"a": ("t", "x"), "b": ("u", "y"), "c": ("t", "z")}


def test_owners_filled_when_first_read_are_the_files_owners_in_path_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every way of reading :class:`~fabgen.targets.render.Owners` sees the same table, in the files' order."""
    def stream(*args: Any, **kwargs: Any) -> Any:
        yield [("b", "1", ("t", "x")), ("a", "2", ("t", "x"))]
        yield [("b", "3", ("u", "y")), ("c", "4", ("t", "z"))]

    monkeypatch.setattr(render_module, "render_stream", stream)
    lab = plan_fabric(load_spec(example("lab")))
    expected = {"a": ("t", "x"), "b": ("u", "y"), "c": ("t", "z")}
    readers: dict[str, tuple[Callable[[Any], Any], Any]] = {
        "items": (lambda o: list(o.items()), list(expected.items())), "get": (lambda o: o.get("b"), ("u", "y")),
        "contains": (lambda o: "c" in o, True), "getitem": (lambda o: o["a"], ("t", "x")), "len": (len, 3),
        "iter": (list, ["a", "b", "c"]), "values": (lambda o: list(o.values()), list(expected.values())),
        "keys": (lambda o: list(o.keys()), ["a", "b", "c"])}
    for first_read, (read, answer) in readers.items():
        files, owners = render_module.render_files(lab)
        assert read(owners) == answer, first_read
        assert list(owners.items()) == list(expected.items()) and list(owners) == list(files)
        assert owners.get("nope") is None and "nope" not in owners and owners.get("nope", 1) == 1
        with pytest.raises(KeyError):
            owners["nope"]


def test_a_failing_batch_is_redone_device_by_device(monkeypatch: pytest.MonkeyPatch) -> None:
    """``render_many`` raising is not an error of its own: the per-device path renders and says what it says."""
    plan = plan_fabric(load_spec(example("lab")))

    def broken(context: RenderContext, pairs: Any) -> Any:
        raise RuntimeError("batch bug")

    target = dataclasses.replace(install.SWITCH_TARGET, render_many=broken)
    problems: list[Problem] = []
    rows = [row for batch in render_module._render_batches(plan, [(target, devices_of(plan, target))], None, problems)
            for row in batch]
    _, one = _both(plan, install.SWITCH_TARGET)
    assert (rows, problems) == one


@pytest.mark.parametrize("first", ["0644", "0755", "lab01"])
def test_a_shape_whose_verdict_needs_the_name_is_not_admitted(first: str, fresh: None,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Every mode set to the host's name: one shape (``"mode": "@"``) that passes for a host called ``0644`` only."""
    real = install.host_entries
    monkeypatch.setattr(install, "host_entries", lambda plan, host: [dict(e, mode=host.name) for e in real(plan, host)])
    plan = plan_fabric(load_spec(example("lab")))
    hosts = [dataclasses.replace(plan.hosts[0], name=n) for n in (first, "lab02", "0644", "lab03")]
    context = RenderContext(plan=plan, env=environment())
    _, problems = install._render_hosts(context, [(h.name, h) for h in hosts]) or ([], [])
    full = [p for h in hosts for path, text in install._render_host(context, h).items()
            for p in install_check._check(path, text)]
    assert {p.file for p in problems} == {"hosts/lab02/install.json", "hosts/lab03/install.json"} | (
        {f"hosts/{first}/install.json"} if first == "lab01" else set())
    assert problems == full


@pytest.mark.parametrize("names", [["a"], ["a", "b"], [""], ["a", ""], ["", "a"], ["a."], [".a"], ["_a"], ["-a"],
                                   ["a-b_c.d", "Z9"], ["a\n"], ["\na"], ["a\nb"], ["a", "b\n"], ["\u00e9"], ["a b"],
                                   ["a\x00"], ["a/b"], ["@"], ["a", "b", "c-"], ["0"], ["a" * 300]])
def test_all_safe_agrees_with_safe_name_one_by_one(names: list[str]) -> None:
    assert install_check.all_safe(names) == all(install_check.SAFE_NAME.fullmatch(n) is not None for n in names)


def test_a_batch_after_the_shapes_are_proved_is_the_per_device_render(fresh: None) -> None:
    """Batches after the first (one pass, each OS's proved shape looked up) give the per-device rows, OSes mixed,
    one that installs nothing among them; a batch with an OS not proved yet proves it on the way."""
    context: Any = SimpleNamespace(plan=None)
    switches: Any = [SimpleNamespace(name=f"sw{i:02d}", os=os)
                     for i, os in enumerate(["eos", "eos", "sonic", "eos", "cumulus", "other", "sonic", "eos"])]
    pairs = [(s.name, s) for s in switches]
    expected = [(path, text, ("install-switches", s.name)) for s in switches
                for path, text in install._render_switch(context, s).items()]
    assert all(not install_check._check(path, text) for path, text, _ in expected)
    first = install._render_switches(context, pairs[:2])  # proves eos only
    assert first == (expected[:2], []) and set(install._PROVED_PARTS) == {"eos"}
    install_check._PASSED.discard(install._PROVED_PARTS["eos"][0])  # verdicts reset: eos is proved again
    assert install._render_switches(context, pairs[:2]) == first and install._PROVED_PARTS["eos"][0] in install_check._PASSED
    for _ in range(2):  # the first time proves sonic and cumulus; then one pass but for "other" (no list)
        assert install._render_switches(context, pairs) == (expected, [])
    assert set(install._PROVED_PARTS) == {"eos", "sonic", "cumulus"}
    only_proved = [pair for pair in pairs if pair[1].os != "other"]
    assert install._render_switches(context, only_proved) == (expected, [])


def test_an_unsafe_name_after_the_shapes_are_proved_still_goes_the_per_device_way(fresh: None) -> None:
    context: Any = SimpleNamespace(plan=None)
    good: Any = SimpleNamespace(name="sw1", os="eos")
    assert install._render_switches(context, [("sw1", good)]) is not None and install._PROVED_PARTS
    for bad in ("b\nc", "x@y", "a/b", "-a", ""):
        assert install._render_switches(context, [("sw1", good), (bad, SimpleNamespace(name=bad, os="eos"))]) is None


def test_a_batch_of_one_proved_os_is_the_per_device_render(fresh: None) -> None:
    """The one-OS batch (paths from one join split at newlines, texts mapped, rows zipped) gives the per-device rows;
    a verdict reset, or an OS not proved yet, sends it the proving way, which gives them too."""
    context: Any = SimpleNamespace(plan=None)
    for os in ("eos", "sonic", "cumulus"):
        switches: Any = [SimpleNamespace(name=name, os=os) for name in ("a", "leaf-r0-p00-01", "Z9.x_y", "a")]
        pairs = [(s.name, s) for s in switches]
        expected = [(path, text, ("install-switches", s.name)) for s in switches
                    for path, text in install._render_switch(context, s).items()]
        assert len(expected) == len(switches)
        for _ in range(2):  # proves the OS, then the one-OS pass
            assert install._render_switches(context, pairs) == (expected, [])
            assert install._PROVED_PARTS[os][0] in install_check._PASSED
        install_check._PASSED.discard(install._PROVED_PARTS[os][0])
        assert install._render_switches(context, pairs) == (expected, [])
    nothing: Any = [(n, SimpleNamespace(name=n, os="other")) for n in ("a", "b")]
    assert install._render_switches(context, nothing) == ([], [])
