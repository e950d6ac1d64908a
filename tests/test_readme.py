"""README stays true: its first commands, and a row for every CLI command and generate option."""

from __future__ import annotations

import argparse

from fabgen.cli import build_parser
from tests.helpers import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_first_lines_are_setup_main_job_and_tests() -> None:
    block = README.split("```", 2)[1]
    lines = [line for line in block.splitlines()[1:] if line.strip()]
    assert [line.rsplit("#", 1)[1].strip() for line in lines] == ["set up", "main job: render the bundled lab", "tests"]
    assert "pip install -e '.[test]'" in lines[0] and "fabgen generate examples/" in lines[1] and "pytest" in lines[2]


def test_every_command_is_documented() -> None:
    for name in _subcommands():
        assert f"`fabgen {name}" in README, f"README's command table lacks fabgen {name}"


def test_every_generate_option_is_documented() -> None:
    generate = _subcommands()["generate"]
    for action in generate._actions:
        longest = max(action.option_strings, key=len, default=None)
        if longest and longest not in ("--help", "--quiet"):
            assert longest in README or (action.option_strings and min(action.option_strings, key=len) in README), longest


def test_every_target_is_documented() -> None:
    from fabgen.targets.registry import target_names

    for name in target_names():
        assert f"`{name}`" in README, name
