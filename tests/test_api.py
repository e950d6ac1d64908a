"""The public API: five verbs, callable whatever fabgen's subpackages were imported since."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import fabgen
from tests.helpers import ROOT, example


def test_verbs_survive_subpackage_imports(tmp_path: Path) -> None:
    code = (
        "import fabgen\n"
        f"s = fabgen.load_spec({str(example('lab'))!r})\n"
        "p = fabgen.plan(s)\n"
        "import fabgen.render.registry, fabgen.lint.engine, fabgen.plan.build, fabgen.writer\n"
        "files = fabgen.render(p, targets=['eos'], devices=['leaf-*'])\n"
        "assert files and all(k.startswith('switches/leaf-') for k in files), sorted(files)\n"
        "findings = fabgen.lint(s, p)\n"
        "assert isinstance(findings, list)\n"
        f"r = fabgen.write(files, {str(tmp_path / 'out')!r})\n"
        "assert sorted(r.written) == sorted(files)\n"
        "assert callable(fabgen.plan) and callable(fabgen.render) and callable(fabgen.lint)\n"
        "print('ok')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert proc.returncode == 0 and proc.stdout == "ok\n", proc.stderr


def test_text_or_path_and_all() -> None:
    assert set(fabgen.__all__) >= {"load_spec", "plan", "render", "lint", "write"}
    text = example("lab").read_text()
    assert fabgen.load_spec(text).cluster.name == fabgen.load_spec(example("lab")).cluster.name


def test_thread_safe_rendering() -> None:
    spec = fabgen.load_spec(example("lab"))
    expected = fabgen.render(fabgen.plan(spec))
    results: list[dict[str, str]] = []

    def work() -> None:
        results.append(fabgen.render(fabgen.plan(spec)))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 4
