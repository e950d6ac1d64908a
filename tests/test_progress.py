"""Progress: a rewritten status line on a terminal's stderr, nothing when stderr is a pipe or with -q."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT, example


def _generate(out: Path, *extra: str, tty: bool) -> tuple[int, bytes]:
    argv = [sys.executable, "-m", "fabgen.cli", "generate", str(example("lab")), "-o", str(out), *extra]
    if not tty:
        proc = subprocess.run(argv, capture_output=True, cwd=ROOT, timeout=120, check=False)
        return proc.returncode, proc.stderr
    master, slave = pty.openpty()
    proc2 = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=slave, cwd=ROOT)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc2.wait(timeout=120), b"".join(chunks)


def test_terminal_gets_stages_and_a_cleared_line(tmp_path: Path) -> None:
    code, err = _generate(tmp_path / "a", tty=True)
    assert code == 0
    for stage in (b"loading the spec", b"planning", b"rendering 6 switches, 4 hosts", b"writing "):
        assert stage in err, err
    assert err.count(b"\r\x1b[K") >= 5 and err.endswith(b"\r\x1b[K")  # the last thing written clears the line


def test_pipe_and_quiet_get_nothing(tmp_path: Path) -> None:
    code, err = _generate(tmp_path / "b", tty=False)
    assert code == 0 and err == b""
    code, err = _generate(tmp_path / "c", "-q", tty=True)
    assert code == 0 and err == b""
