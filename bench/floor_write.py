"""The floor of ``write``: the same files and directories created by a bare loop, against :class:`TreeWriter`.

    python bench/floor_write.py [--spec examples/llama3-24k/spec.yaml] [--repeat 2]

Why: the write stage is mostly the kernel's (creating 21,523 files and 3,081
directories on ext4), so its time says little about fabgen until it is set
beside what the same creations cost with no Python around them. Three
figures, in one process, alternating so that the machine's noise falls on
both alike, each the CPU time (user and system apart) of:

- ``floor``: ``mkdir`` once per directory, then ``open``/``write``/``close``
  per file, in the writer's order, in a fresh temporary tree on the same
  filesystem (its directories made as the writer makes them, by
  :class:`fabgen.dir_placement.DirectoryPlacement`);
- ``writer``: :class:`fabgen.writer.TreeWriter` writing the same bytes into a
  fresh output directory, hashing, manifest and atomic swap included;
- ``writer, no syscalls``: the writer with file creation and ``mkdir`` replaced
  by no-ops: its Python cost per file (path check, hashing, manifest entry).

Temporary trees are kept until the end and removed together: removing one
between runs would make the next run's inode allocation skip its freed inodes
(see :mod:`fabgen.dir_placement`) and measure that instead.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from unittest import mock

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.rows import Row, discard
from fabgen import writer as writer_module
from fabgen.dir_placement import DirectoryPlacement

Files = list[tuple[str, bytes, tuple[str, str]]]


def rendered(spec: Path) -> Files:
    """The files ``fabgen generate`` writes for ``spec``, in its order, encoded."""
    from fabgen.pipeline import load_spec, plan_fabric
    from fabgen.targets.render import render_stream

    plan = plan_fabric(load_spec(spec))
    return [(path, text.encode(), owner) for batch in render_stream(plan) for path, text, owner in batch]


def floor(root: str, files: Files) -> None:
    """Only the syscalls: one ``mkdir`` per directory (placed as the writer places them), ``open``/``write``/``close``
    per file."""
    made = {""}
    placement = DirectoryPlacement(root)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
    for path, data, _ in files:
        parent = path.rpartition("/")[0]
        if parent not in made:
            parts = parent.split("/")
            for depth in range(1, len(parts) + 1):
                sub = "/".join(parts[:depth])
                if sub not in made:
                    placement.mkdir(sub)
                    made.add(sub)
        fd = os.open(f"{root}/{path}", flags, 0o666)
        os.write(fd, data)
        os.close(fd)


def write(out: str, files: Files) -> None:
    tree = writer_module.TreeWriter(Path(out), {"fabgen_version": "bench"})
    for path, data, owner in files:
        tree.add(path, data, owner)
    tree.finish()


@contextmanager
def no_syscalls() -> Iterator[None]:
    """The writer with its file and directory creation made no-ops (the swap of an empty tree still runs)."""
    def record_parents(self: writer_module.TreeWriter, rel: str) -> None:
        while rel not in self._dirs:
            self._dirs.add(rel)
            rel = rel.rpartition("/")[0]

    with mock.patch.object(writer_module, "_write_new", lambda dest, data: None), \
            mock.patch.object(writer_module.TreeWriter, "_make_parents", record_parents):
        yield


def cpu(run: Callable[[], None]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_SELF)
    run()
    after = resource.getrusage(resource.RUSAGE_SELF)
    return after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime


def measure(files: Files, repeat: int) -> dict[str, list[tuple[float, float]]]:
    """(user, sys) CPU seconds of each figure, ``repeat`` times, the three kinds taking turns."""
    found: dict[str, list[tuple[float, float]]] = {}
    gc.disable()  # as in generate, which writes with the collector paused
    trees: list[str] = []
    try:
        for _ in range(repeat):
            for name in KINDS:
                top = tempfile.mkdtemp(prefix="fabgen-floor-write-", dir=os.environ.get("FABGEN_BENCH_TMP"))
                trees.append(top)
                if name == "floor":
                    os.mkdir(f"{top}/out")
                    found.setdefault(name, []).append(cpu(partial(floor, f"{top}/out", files)))
                elif name == "writer":
                    found.setdefault(name, []).append(cpu(partial(write, f"{top}/out", files)))
                else:
                    with no_syscalls():
                        found.setdefault(name, []).append(cpu(partial(write, f"{top}/out", files)))
    finally:
        gc.enable()
        for top in trees:
            discard(Path(top))
    return found


KINDS = ("floor", "writer", "writer, no syscalls")


SPEC_24K = Path(__file__).resolve().parents[1] / "examples/llama3-24k/spec.yaml"


def rows(spec: Path = SPEC_24K, repeat: int = 5) -> list[Row]:
    """The write stage against its syscall floor, for ``bench/run.py``: the median of ``repeat`` turns' ratios.

    Each turn's writer is set against the floor measured just before it, so the two meet the same state of the
    disk; the median turn is shown. (The lowest of each kind over two turns had paired one turn's lucky floor with
    another's slow writer: 2.3x in a run whose turns read 1.2 to 1.5x.)
    """
    files = rendered(spec)
    found = measure(files, repeat)
    turns = sorted(range(repeat), key=lambda turn: sum(found["writer"][turn]) / sum(found["floor"][turn]))
    middle = turns[(repeat - 1) // 2]
    writer, floor_s = sum(found["writer"][middle]), sum(found["floor"][middle])
    ratio = writer / floor_s
    stubbed = statistics.median(sum(turn) for turn in found["writer, no syscalls"])
    per_file = stubbed / len(files) * 1e6
    return [
        Row(f"24k write within 2x of its syscall floor (the same mkdir/open/write/close, no Python; median of "
            f"{repeat} turns)", f"{ratio:.1f}x ({writer:.2f} s vs {floor_s:.2f} s CPU, {len(files):,} files)",
            "<= 2x", ratio <= 2, ratio),
        Row("24k write: the writer's own Python per file (syscalls stubbed; sha256 included)",
            f"{per_file:.1f} us ({stubbed:.2f} s)", "-", None, per_file),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", type=Path, default=SPEC_24K)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    files = rendered(args.spec)
    size = sum(len(data) for _, data, _ in files)
    print(f"{len(files):,} files, {size / 1e6:.1f} MB, on {os.path.realpath(tempfile.gettempdir())}")
    found = measure(files, args.repeat)
    for turn in range(args.repeat):
        for name in KINDS:
            user, system = found[name][turn]
            print(f"  {name:<20} {user + system:6.3f} s CPU (user {user:.3f}, sys {system:.3f}), "
                  f"{(user + system) / len(files) * 1e6:5.1f} us per file")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
