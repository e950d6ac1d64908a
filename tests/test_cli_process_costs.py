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


def _fresh_generate(tmp_path: Path, report: str, first: str = "") -> str:
    """Run ``fabgen generate`` of the lab in a new process (no plugin setting of ours), ``first`` before it, and
    print ``report`` after."""
    probe = (
        f"import sys, fabgen.cli{first}\n"
        "code = fabgen.cli.main(sys.argv[1:])\n"
        "assert 'fabgen.spec.cluster' in sys.modules and 'fabgen.targets.registry' in sys.modules\n"
        f"print(code, {report})\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    proc = subprocess.run([sys.executable, "-c", probe, "generate", str(example("lab")), "-o", str(tmp_path / "o"),
                           "-q"], capture_output=True, text=True, env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_a_fresh_generate_process_never_scans_for_plugins(tmp_path: Path) -> None:
    """In a real process: the spec models are built, and pydantic's plugin loader (imported already, so it is the
    one asked) never looked at the entry points."""
    # None: get_plugins() never scanned (it caches {} after a scan)
    assert _fresh_generate(tmp_path, "loader._plugins", ", pydantic.plugin._loader as loader") == "0 None\n"


def test_the_plugin_loader_stands_in_only_while_the_models_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside: pydantic's ``from ._loader import get_plugins`` gets "no plugins"; after: the real loader again."""
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    monkeypatch.delitem(sys.modules, cli._PLUGIN_LOADER, raising=False)
    with cli._no_pydantic_plugins():
        from pydantic.plugin._loader import get_plugins

        assert tuple(get_plugins()) == ()
        assert sys.modules[cli._PLUGIN_LOADER] is cli._NO_PLUGINS
    assert cli._PLUGIN_LOADER not in sys.modules
    import pydantic.plugin._loader as real

    assert real is not cli._NO_PLUGINS and hasattr(real, "entry_points")


def test_an_operators_setting_gets_the_real_loader(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "logfire")
    monkeypatch.delitem(sys.modules, cli._PLUGIN_LOADER, raising=False)
    with cli._no_pydantic_plugins():
        assert cli._PLUGIN_LOADER not in sys.modules


def test_pydantic_imports_nothing_else_from_its_loader() -> None:
    """The stand-in has ``get_plugins`` only: a pydantic that imports another name from ``_loader`` must fail here."""
    import re

    import pydantic

    root = Path(pydantic.__file__).parent
    names: set[str] = set()
    for path in root.rglob("*.py"):
        if path.name == "_loader.py":
            continue
        text = path.read_text(encoding="utf-8")
        for imported in re.findall(r"from \.*(?:plugin\.)?_loader import ([\w, ()]+)", text):
            names.update(n.strip(" ()") for n in imported.split(","))
        names.update(re.findall(r"\b_loader\.(\w+)", text))
        assert "import _loader" not in text.replace("from ._loader import", ""), path
    assert names == {"get_plugins"}
    assert callable(cli._NO_PLUGINS.get_plugins)


def test_a_fresh_generate_process_never_imports_package_metadata(tmp_path: Path) -> None:
    """``importlib.metadata`` (and the ``email`` package it pulls in) is only pydantic's plugin scan: never paid."""
    report = "sorted(m for m in ('importlib.metadata', 'email', 'zipfile') if m in sys.modules)"
    assert _fresh_generate(tmp_path, report) == "0 []\n"


def test_a_fresh_generate_process_of_proved_topologies_never_imports_lxml(tmp_path: Path) -> None:
    """lxml is the nccl-topo check's fallback: a file the scanner's proof clears (every file fabgen writes) needs none."""
    assert _fresh_generate(tmp_path, "'lxml.etree' in sys.modules") == "0 False\n"
