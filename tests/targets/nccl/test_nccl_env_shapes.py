"""The nccl-env checks judge each distinct line (and each host-independent rest of a file) once.

What must hold: the memoised verdicts are the verdicts of the whole-file readers,
whatever was checked before, and a bad line planted in one file among good
ones of the same shape (the profile's shared pair, a host's own) is still
reported at its line.
"""

from __future__ import annotations

import pytest
from conftest import EXAMPLES
from hypothesis import given, settings
from hypothesis import strategies as st

import fabgen.pipeline as pipeline
from fabgen.errors import FabgenError
from fabgen.targets.nccl import conf
from fabgen.targets.nccl.conf import format_nccl_conf, format_systemd_env, iter_systemd_env, nccl_conf_problems
from fabgen.targets.nccl.env import validate_env_file

LAB = EXAMPLES / "lab" / "spec.yaml"


@pytest.fixture(scope="module")
def files() -> dict[str, str]:
    return pipeline.render_fabric(pipeline.plan_fabric(pipeline.load_spec(LAB)),
                                  targets=["nccl-env", "nccl-env-profile"])


OWNERS = ["hosts/_profiles/lab-node", "hosts/lab04"]
"""The profile's pair, which lab01..lab03 install, and lab04's own (mlx5_3 out of service)."""


def _one(files: dict[str, str], owner: str, suffix: str) -> tuple[str, str]:
    paths = sorted(p for p in files if p.endswith(suffix))
    assert len(paths) == 2
    for path in paths:  # the other file warms the caches first
        assert validate_env_file(path, files[path]) == []
    return f"{owner}{suffix}", files[f"{owner}{suffix}"]


@pytest.mark.parametrize(("suffix", "old", "new", "bad", "message"), [
    ("/nccl.conf", "NCCL_IB_TC=", "NCCL_IB_TC= ", "NCCL_IB_TC= ", "whitespace"),
    ("/nccl.conf", "NCCL_CROSS_NIC=0\n", "NCCL_CROSS_NIC=0\nNCCL_CROSS_NIC=1\n", "NCCL_CROSS_NIC=1", "already set"),
    ("/nccl.conf", "NCCL_IB_HCA=", "export NCCL_IB_HCA=", "export NCCL_IB_HCA=", "export"),
    ("/nccl.env", "NCCL_IB_TC=", "NCCL IB_TC=", "NCCL IB_TC=", "invalid variable name"),
    ("/nccl.env", "NCCL_CROSS_NIC=0\n", "NCCL_CROSS_NIC=0\nNCCL_CROSS_NIC=1\n", "NCCL_CROSS_NIC=1", "overrides"),
    ("/nccl.env", "NCCL_IB_TC=", "NCCL_IB_TC=\x01", "NCCL_IB_TC=\x01", "control character"),
])
@pytest.mark.parametrize("owner", OWNERS)
def test_a_bad_line_in_one_file_is_found_at_its_line(files: dict[str, str], owner: str, suffix: str, old: str,
                                                     new: str, bad: str, message: str) -> None:
    path, text = _one(files, owner, suffix)
    planted = text.replace(old, new, 1)
    problems = validate_env_file(path, planted)
    assert problems and message in problems[0].message
    assert (problems[0].file, problems[0].line) == (path, planted[:planted.index(bad)].count("\n") + 1)


@pytest.mark.parametrize("owner", OWNERS)
def test_the_first_line_is_judged_too(files: dict[str, str], owner: str) -> None:
    """The line that differs per file (host or profile) is never taken from a cache of the others."""
    path, text = _one(files, owner, "/nccl.conf")
    first, _, rest = text.partition("\n")
    assert [p.line for p in validate_env_file(path, "NCCL_IB_TC=1\n" + rest)] == [rest[:rest.index(
        "NCCL_IB_TC=")].count("\n") + 2]
    assert validate_env_file(path, " # NCCL_X=1\n" + rest)  # an indented '#' is no comment for NCCL
    assert validate_env_file(path, first + "\n" + rest) == []
    env_path = path.replace(".conf", ".env")
    unit = files[env_path]
    first, _, rest = unit.partition("\n")
    swallowed = 'X="\n' + rest  # an open quote takes the rest as X's value: the file is parsed whole
    assert conf.parse_systemd_env(swallowed) == {"X": "\n" + rest}
    assert validate_env_file(env_path, 'X="\n' + rest + '"\nNCCL_IB_TC=1\nX=2\n')[0].message.startswith("X overrides")
    # a NUL ends the file for systemd: the assignments after it are not read, so not refused either
    assert validate_env_file(env_path, first + "\0\nBAD NAME=1\n") == []


def test_cached_assignments_keep_type_rules() -> None:
    """As dictionary keys ``1 == 1.0``: a value that is refused must stay refused after an equal one passed."""
    assert format_nccl_conf({"NCCL_IB_TIMEOUT": 22}, ["h"]) == "# h\nNCCL_IB_TIMEOUT=22\n"  # type: ignore[dict-item]
    with pytest.raises(FabgenError, match="float"):
        format_nccl_conf({"NCCL_IB_TIMEOUT": 22.0}, ["h"])  # type: ignore[dict-item]
    assert format_nccl_conf({"NCCL_X": True}, ["h"]) == "# h\nNCCL_X=1\n"  # type: ignore[dict-item]
    with pytest.raises(FabgenError, match="list"):
        format_systemd_env({"NCCL_X": ["1"]}, ["h"])  # type: ignore[dict-item]


def test_a_bad_first_header_line_is_refused_after_good_ones() -> None:
    for host in ("a", "b"):
        format_systemd_env({"NCCL_X": "1"}, [f"host {host}", "usage"])
    with pytest.raises(FabgenError, match="header") as info:
        format_systemd_env({"NCCL_X": "1"}, ["host c\nNCCL_X=2", "usage"], file="hosts/c/nccl.env")
    assert [(p.file, p.path) for p in info.value.problems] == [("hosts/c/nccl.env", "header[0]")]


_LINES = st.lists(st.text(alphabet="AB_= #;'\"\\\t\r\0x", max_size=8), max_size=6)


@settings(max_examples=400, deadline=None)
@given(_LINES, st.booleans())
def test_systemd_per_line_reading_is_the_whole_file_machine(lines: list[str], final_newline: bool) -> None:
    text = "\n".join(lines) + ("\n" if final_newline else "")
    whole = [(e.name, e.value, e.line, conf._systemd_refusal(e.name, e.value)) for e in iter_systemd_env(text)]
    assert conf._systemd_entries(text) == whole
    try:
        conf.parse_systemd_env_located(text, "f", strict=True)
        expected = []
    except FabgenError as exc:
        expected = exc.problems
    assert conf.systemd_env_problems(text, "f") == expected
    assert conf.systemd_env_problems(text, "f") == expected  # and again, from the caches


@settings(max_examples=400, deadline=None)
@given(_LINES)
def test_nccl_conf_verdict_does_not_depend_on_the_caches(lines: list[str]) -> None:
    text = "\n".join(lines) + "\n"
    expected = conf._conf_problems(text, "f")
    assert nccl_conf_problems(text, "f") == expected
    assert nccl_conf_problems(text, "f") == expected


@settings(max_examples=1500, deadline=None)
@given(st.text(alphabet="AB_==x;# \t'\"\\\r\0\x01\u00e9", max_size=10))
def test_a_plain_assignment_line_reads_as_the_machine_reads_it(line: str) -> None:
    """_systemd_line's NAME=value shortcut (no walk of the characters) gives the machine's own entries."""
    entries, between = conf._run_systemd(line + "\n", finish=False)
    machine = tuple((e.name, e.value, conf._systemd_refusal(e.name, e.value)) for e in entries) if between else None
    conf._systemd_line.cache_clear()
    assert conf._systemd_line(line) == machine
