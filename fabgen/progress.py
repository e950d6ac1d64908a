"""Progress on stderr for long runs, only when stderr is a terminal (and not ``-q``).

A 24k ``generate`` takes seconds with nothing to show; a line rewritten in place
(``fabgen: rendering 11,267 files ... 2.1 s``) says what it is doing. Piped or
redirected stderr (CI logs, scripts) gets nothing, so no log fills with
carriage returns. The reporter is process-wide and off unless the CLI turns it
on with :func:`reporting`; library calls never print.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO


class _Reporter:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.start = time.monotonic()
        self.shown = False

    def stage(self, text: str) -> None:
        elapsed = time.monotonic() - self.start
        self.stream.write(f"\r\x1b[Kfabgen: {text} ... {elapsed:.1f} s")
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


_current: _Reporter | None = None


def stage(text: str) -> None:
    """Say what the run does now (a no-op unless :func:`reporting` is active)."""
    if _current is not None:
        _current.stage(text)


@contextmanager
def reporting(quiet: bool = False, stream: TextIO | None = None) -> Iterator[None]:
    """Report stages to ``stream`` (stderr) while inside, if it is a terminal and not ``quiet``; clear the line after."""
    global _current
    out = stream if stream is not None else sys.stderr
    if quiet or not out.isatty() or _current is not None:
        yield
        return
    _current = _Reporter(out)
    try:
        yield
    finally:
        _current.clear()
        _current = None
