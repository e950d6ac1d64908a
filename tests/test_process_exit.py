"""The ``fabgen`` command leaves through ``os._exit`` after :func:`fabgen.cli.main`: nothing it says may be lost.

Skipping the interpreter's teardown is only safe if every byte already printed
reaches its reader and main's exit code is the process's; these run the real
command (``python -m fabgen.cli``, the same :func:`fabgen.cli.console` as the
installed script) with its streams on pipes, where output is block-buffered
and would vanish without the flush.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import example

ENV = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE") and k != "PYTHONUNBUFFERED"}
"""Block-buffered streams, as for any user: with PYTHONUNBUFFERED nothing would be left to flush."""


def _run(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    probe = "import sys, fabgen.cli; sys.modules.pop('coverage', None); fabgen.cli.console()"
    return subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, input=stdin,
                          timeout=300, env=ENV, check=False)


def test_generate_output_and_code_survive_the_fast_exit(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = _run("generate", str(example("lab")), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    written = int(proc.stdout.split(": ")[1].split(" written")[0])
    manifest = json.loads((out / "manifest.json").read_text())
    assert written == len(manifest["files"]) > 10
    assert proc.stdout == f"{out}: {written} written, 0 unchanged, 0 removed\n"


def test_a_large_stdout_is_flushed_whole(tmp_path: Path) -> None:
    """Several stdio buffers (8 KB each) of JSON: all of it arrives, then exit 0."""
    proc = _run("schema")
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout) > 4 * 8192
    json.loads(proc.stdout)  # whole: a truncated schema would not parse


def test_errors_reach_stderr_with_their_exit_code(tmp_path: Path) -> None:
    bad = tmp_path / "spec.yaml"
    bad.write_text("version: 1\ncluster: {name: x, transport: rocev2}\nhosts: 3\n")
    proc = _run("validate", str(bad))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"{bad}:") and proc.stdout == ""


def test_usage_errors_take_the_ordinary_exit() -> None:
    proc = _run("generate")
    assert proc.returncode == 2 and "usage:" in proc.stderr


def test_a_closed_stdout_is_not_an_error() -> None:
    """``fabgen schema | head -c 10``: the reader leaves early; exit 0 and no traceback, as before."""
    probe = "import sys, fabgen.cli; sys.modules.pop('coverage', None); fabgen.cli.console()"
    with subprocess.Popen([sys.executable, "-c", probe, "schema"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=ENV) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.read(10)
        proc.stdout.close()
        err = proc.stderr.read().decode()
        code = proc.wait(timeout=120)
    assert code == 0 and "Traceback" not in err, err


def test_the_plan_is_kept_only_when_the_process_ends_by_exit(tmp_path: Path) -> None:
    """A library caller's plans are freed as usual; the command's is held to its ``os._exit`` (nothing to free)."""
    probe = (
        "import sys; from pathlib import Path; import fabgen._gc as g; from fabgen.pipeline import generate, load_spec\n"
        "spec = load_spec(Path(sys.argv[1]))\n"
        "generate(spec, Path(sys.argv[2]) / 'a'); print(g._KEPT is None)\n"
        "g.ending_by_exit(); generate(spec, Path(sys.argv[2]) / 'b'); print([type(v).__name__ for v in g._KEPT])\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe, str(example("lab")), str(tmp_path)], capture_output=True,
                          text=True, timeout=300, env=ENV, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "True\n['FabricPlan']\n"


def test_a_profiled_run_still_writes_its_profile(tmp_path: Path) -> None:
    """``python -m cProfile -m fabgen.cli``: the profile is printed at exit, so that run takes the ordinary exit."""
    proc = subprocess.run([sys.executable, "-m", "cProfile", "-m", "fabgen.cli", "validate", str(example("lab"))],
                          capture_output=True, text=True, timeout=300, env=ENV, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "function calls" in proc.stdout and "Ordered by" in proc.stdout
