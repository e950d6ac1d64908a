"""What ``fabgen generate`` does around its stages to save CPU: the collector paused, no pydantic plugin scan.

Both are scoped: they must hold while ``generate`` runs and be gone after it
(an in-process caller, the next command, a child process see nothing of them).
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

import fabgen.cli as cli
from tests.helpers import example


def test_generate_runs_without_the_collector_and_restores_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import fabgen.pipeline as pipeline

    seen: list[bool] = []
    real = pipeline.load_spec

    def spy(source: str | Path) -> object:
        seen.append(gc.isenabled())
        return real(source)

    monkeypatch.setattr(pipeline, "load_spec", spy)
    assert gc.isenabled()
    assert cli.main(["generate", str(example("lab")), "-o", str(tmp_path / "out"), "-q"]) == 0
    assert seen == [False]
    assert gc.isenabled()


def test_a_failed_generate_restores_the_collector(tmp_path: Path) -> None:
    bad = tmp_path / "spec.yaml"
    bad.write_text("version: 1\nhosts: 3\n")
    assert cli.main(["generate", str(bad), "-o", str(tmp_path / "out"), "-q"]) == 2
    assert gc.isenabled()


def test_plugins_are_off_only_while_the_models_build(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    with cli._no_pydantic_plugins():
        assert os.environ["PYDANTIC_DISABLE_PLUGINS"] == "__all__"
    assert "PYDANTIC_DISABLE_PLUGINS" not in os.environ


def test_an_operators_plugin_setting_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "logfire")
    with cli._no_pydantic_plugins():
        assert os.environ["PYDANTIC_DISABLE_PLUGINS"] == "logfire"
    assert os.environ["PYDANTIC_DISABLE_PLUGINS"] == "logfire"


def test_a_fresh_generate_process_never_scans_for_plugins(tmp_path: Path) -> None:
    """In a real process: the spec models are built, and pydantic's plugin loader never looked at the entry points."""
    probe = (
        "import sys, fabgen.cli, pydantic.plugin._loader as loader\n"
        "code = fabgen.cli.main(sys.argv[1:])\n"
        "assert 'fabgen.spec.cluster' in sys.modules\n"
        "print(code, loader._plugins)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    proc = subprocess.run([sys.executable, "-c", probe, "generate", str(example("lab")), "-o", str(tmp_path / "o"),
                           "-q"], capture_output=True, text=True, env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "0 None\n"  # None: get_plugins() never scanned (it caches {} after a scan)
