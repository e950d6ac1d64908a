"""The generation figures of issue 17 as rows: 24k end to end, EOS against pyavd, floors, 131k and 262k.

Every figure is the CPU time (user + sys, from ``os.wait4``'s rusage of the
``fabgen generate`` process, or ``time.process_time`` in-process) because the
machine is shared: wall time is printed beside it, but only CPU time and the
ratios taken in one run compare. Peak RSS is the child's ``ru_maxrss``.
"""

from __future__ import annotations

import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from bench.rows import Row, discard

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Run:
    """One ``fabgen generate`` process."""

    cpu_s: float
    wall_s: float
    peak_mb: float
    sys_s: float = 0.0
    """The kernel's share of ``cpu_s``: on a journal-less ext4, creating files right after others were removed
    costs seconds of it (``recently_deleted`` in the inode allocator), so the row shows it apart."""


def fabgen_process(spec: Path, out: Path, *extra: str) -> Run:
    """Run ``fabgen generate SPEC -o OUT`` in a child and read its own rusage (not the bench's, not a sibling's)."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "fabgen.cli", "generate", str(spec), "-o", str(out), *extra],
                                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"fabgen generate {spec} failed:\n{err.read().decode(errors='replace')}")
    return Run(usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024, usage.ru_stime)


def _cpu(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.process_time()
    result = fn()
    return time.process_time() - start, result


def _spec_file(name: str, tmp: Path) -> Path:
    from bench.run import _spec_text

    _, text = _spec_text(name)
    path = tmp / f"{name}.yaml"
    path.write_text(text)
    return path


def _seconds(run: Run) -> str:
    return f"{run.cpu_s:.2f} s CPU, of which {run.sys_s:.2f} s system ({run.wall_s:.2f} s wall)"


def _mb(mb: float) -> str:
    return f"{mb / 1024:.2f} GB" if mb >= 1024 else f"{mb:.0f} MB"


def _pyavd_per_device(plan: Any, count: int = 3) -> float | None:
    """Median CPU seconds pyavd takes for one leaf: validate the structured config and render the EOS config."""
    try:
        import pyavd
    except ImportError:
        return None
    from fabgen.targets.avd.structured import structured_config
    from fabgen.targets.eos.config import eos_config

    leaves = [s for s in plan.switches if s.os == "eos" and s.tier == "leaf"][:count]
    times = []
    for leaf in leaves:
        structured = structured_config(eos_config(plan, leaf))

        def render(structured: dict[str, Any] = structured) -> str:
            result = pyavd.validate_structured_config(structured)
            text: str = pyavd.get_device_config(result.validated_data)
            return text

        times.append(_cpu(render)[0])
    return statistics.median(times)


def _floor(target: str) -> Callable[[Any], dict[str, str]] | None:
    """``floor_files`` of ``bench/floor_<target>.py`` (dashes as underscores), the target's bytes by plain joins."""
    try:
        module = importlib.import_module(f"bench.floor_{target.replace('-', '_')}")
    except ModuleNotFoundError as error:
        if error.name != f"bench.floor_{target.replace('-', '_')}":
            raise
        return None
    floor: Callable[[Any], dict[str, str]] = module.floor_files
    return floor


def warm_templates() -> None:
    """Compile every shipped template into the on-disk template cache, then forget them in this process.

    What a new ``fabgen generate`` process meets once the cache is warm: the code
    is read from disk (``fabgen.targets.template_cache``), not compiled. Without
    this, the first target measured in-process would pay Jinja's compile and the
    next ones would not, so floor ratios would depend on the order of the rows.
    """
    from fabgen.targets.environment import environment

    env = environment()
    for name in env.list_templates(filter_func=lambda name: name.endswith(".j2")):
        env.get_template(name)
    environment.cache_clear()


WARM_PROCESSES = 3
"""How many warm ``fabgen generate`` processes the 24k headline is the median of: one process moved by a fifth
between runs on this shared machine (3.0 to 3.6 s CPU within minutes), more than the margin the row is judged by.
Each writes a new directory and none is removed before the end, so no run creates its files where another's were
just freed (ext4's recently-deleted scan, :mod:`fabgen.dir_placement`)."""


FLOOR_PROCESSES = 5
"""How many fresh processes measure the floors: a target of a few hundred microseconds, timed once, moves by
half between runs on this shared machine, so each row is the median of this many processes' ratios."""


OWN_FABRIC = {"sonic": ("sonic-24k", "SONiC switches", 32), "nvue": ("cumulus-24k", "Cumulus switches", 4)}
"""Target -> (``bench/run.py`` scenario, what its switches run, how many of them are measured): the 24k example
has only EOS switches, so these targets are measured on the same 24,576 GPUs on their own switches. Only a
stride sample of them renders (the same for the target and its floor; a switch's files read no other switch):
with every check, one process took 36 s for all 1,024 SONiC switches and more than 12 CPU minutes for the
Cumulus ones, and the bench runs five."""
OWN_FABRIC_NOTE = "measured on its own fabric"


def floor_measurements(spec: Path, only: str | None = None, sample: int = 0) -> dict[str, tuple[float, float] | str]:
    """In this process (which must be a new one): each target's ``(real_s, floor_s)``, or why it has no ratio.

    The template cache on disk is warm (:func:`warm_templates` first) and the
    process has rendered nothing else, so each target pays what it pays in a
    new ``fabgen generate``: its own templates read from disk, its checks'
    first use. Targets run in the registry's order, as ``generate`` runs them.
    ``only`` measures that target alone (on the plan's ``sample`` switches it
    renders, :func:`sampled`, when ``sample``); without it, the targets of
    :data:`OWN_FABRIC` are left to their own fabric.
    """
    from fabgen.pipeline import load_spec, plan_fabric
    from fabgen.targets.registry import select_targets
    from fabgen.targets.render import render_files

    plan = plan_fabric(load_spec(spec))
    targets = select_targets([only] if only else None)
    if sample:
        plan = sampled(plan, targets[0], sample)
    warm_templates()
    found: dict[str, tuple[float, float] | str] = {}
    for target in targets:
        if only is None and target.name in OWN_FABRIC:
            found[target.name] = OWN_FABRIC_NOTE
            continue
        floor = _floor(target.name)
        if floor is None:
            found[target.name] = "no floor written yet"
            continue
        floor_s, floor_out = _cpu(partial(floor, plan))
        real_s, (real_out, _) = _cpu(partial(render_files, plan, [target.name]))
        if floor_out != real_out:  # a floor that drifted measures other bytes: say so, never a ratio
            missing = sorted({path.rsplit(".", 1)[-1] for path in set(real_out) ^ set(floor_out)}) or ["same files"]
            found[target.name] = f"floor out of date: it no longer writes the target's bytes ({', '.join(missing)})"
            continue
        found[target.name] = (real_s, floor_s)
    return found


def sampled(plan: Any, target: Any, count: int) -> Any:
    """``plan`` with only ``count`` of the switches ``target`` renders, first to last at even steps (every tier).

    A switch's files read the spec and the switch itself, never the other
    switches (``tests/test_floor_own_fabric.py`` shows it), so each renders as in the whole plan.
    """
    from dataclasses import replace

    mine = [s for s in plan.switches if target.applies(s)]
    if len(mine) <= count:
        return replace(plan, switches=tuple(mine))
    return replace(plan, switches=tuple(mine[i * (len(mine) - 1) // max(1, count - 1)] for i in range(count)))


def _floors_in_process(spec: Path, *only: str) -> dict[str, tuple[float, float] | str]:
    """:func:`floor_measurements` in a child ``python -m bench.generate --floors SPEC [TARGET SAMPLE]``
    (a new process)."""
    proc = subprocess.run([sys.executable, "-m", "bench.generate", "--floors", str(spec), *only], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"floor measurement failed:\n{proc.stderr}")
    return {name: value if isinstance(value, str) else (float(value[0]), float(value[1]))
            for name, value in json.loads(proc.stdout).items()}


def floor_rows(spec: Path, processes: int = FLOOR_PROCESSES, tmp: Path | None = None) -> list[Row]:
    """Each target's time against the bytes-only floor (plain joins from the same plan, asserted byte-identical).

    Each of ``processes`` new processes plans the spec and measures every
    target once against its floor (:func:`floor_measurements`); the row is the
    median of their ratios, with the median times beside it. Measured with the
    template cache warm, and the row says so; with the cache off
    (``FABGEN_CACHE_DIR=off``) every target compiles its templates, and the row
    says that. A target of :data:`OWN_FABRIC` is measured the same way on its
    own fabric's spec (written to ``tmp``), its row in the registry's place.
    """
    runs = [_floors_in_process(spec) for _ in range(processes)]
    rows = []
    for name, first in runs[0].items():
        if first == OWN_FABRIC_NOTE and tmp is not None:
            scenario, switches, sample = OWN_FABRIC[name]
            own = [_floors_in_process(_spec_file(scenario, tmp), name, str(sample)) for _ in range(processes)]
            rows.append(_row(name, f"24k {name} ({switches}; {sample} of them rendered)", own))
        else:
            rows.append(_row(name, f"24k {name}", runs))
    return rows


def _row(name: str, fabric: str, runs: list[dict[str, tuple[float, float] | str]]) -> Row:
    """The row of target ``name``: the median of the processes' ratios, or why there is none."""
    from fabgen.user_cache import active_cache_dir

    state = "template cache warm" if active_cache_dir() is not None else "template cache off: compiles"
    title = f"{fabric} within 2x of its bytes-only floor"
    first = runs[0][name]
    if isinstance(first, str):
        return Row(title, first, "<= 2x", None if first.startswith(("no floor", OWN_FABRIC_NOTE)) else False)
    pairs = [pair for run in runs if not isinstance(pair := run[name], str)]
    ratio = statistics.median(real / floor for real, floor in pairs)
    real_s = statistics.median(real for real, _ in pairs)
    floor_s = statistics.median(floor for _, floor in pairs)
    return Row(f"{title} ({state}; median of {len(runs)} processes)",
               f"{ratio:.1f}x ({_ms(real_s)} with every check vs {_ms(floor_s)} by joins)", "<= 2x", ratio <= 2,
               ratio)


def _ms(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds >= 0.1 else f"{seconds * 1000:.2f} ms"


def rows(scale: bool = True) -> list[Row]:
    from unittest import mock

    tmp = Path(tempfile.mkdtemp(prefix="fabgen-bench-generate-", dir=os.environ.get("FABGEN_BENCH_TMP")))
    try:
        # a template cache of the bench's own, empty at first: which run is cold and which warm is known
        with mock.patch.dict(os.environ, {"FABGEN_CACHE_DIR": str(tmp / "cache")}):
            return _generate_rows(tmp, ROOT / "examples" / "llama3-24k" / "spec.yaml", scale)
    finally:
        discard(tmp)  # at the end of the run under bench/run.py, not before the next rows (see discard)


def _warm_rows(spec: Path, tmp: Path) -> tuple[list[Row], Run]:
    """The 24k headline and its peak RSS from :data:`WARM_PROCESSES` warm processes, and the median run."""
    warm = [fabgen_process(spec, tmp / f"24k-{n}") for n in range(WARM_PROCESSES)]
    full = sorted(warm, key=lambda run: run.cpu_s)[(len(warm) - 1) // 2]  # the median run, with its own sys and wall
    spread = ", ".join(f"{run.cpu_s:.2f}" for run in warm)
    peak = max(run.peak_mb for run in warm)
    return [Row(f"24k fabric, all targets, `fabgen generate` end to end (template cache warm; median of "
                f"{len(warm)} processes: {spread} s CPU)", _seconds(full), "< 3 s CPU", full.cpu_s < 3, full.cpu_s),
            Row("24k fabric peak RSS (the most of the warm processes)", _mb(peak), "< 1 GB", peak < 1024, peak)], full


def _generate_rows(tmp: Path, spec24: Path, scale: bool) -> list[Row]:
    """The rows of :func:`rows`, the first process with an empty template cache and every later one warm."""
    from fabgen.pipeline import load_spec, plan_fabric

    found: list[Row] = []
    cold = fabgen_process(spec24, tmp / "24k-cold")
    found.append(Row("24k fabric end to end, template cache cold (first run: compiles and stores every template)",
                     _seconds(cold), "-", None, cold.cpu_s))
    # The cold tree stays until the end: removing it here made the next run's file creation pay ext4's
    # recently-deleted-inode scan (journal-less ext4 on the bench VMs: 3-6 s of system time), not fabgen.
    warm_rows, full = _warm_rows(spec24, tmp)
    found += warm_rows

    plan = plan_fabric(load_spec(spec24))
    switches = sum(1 for s in plan.switches if s.os == "eos")
    eos = fabgen_process(spec24, tmp / "24k-eos", "--only", "eos")
    per_switch = eos.cpu_s / switches
    avd = _pyavd_per_device(plan)
    found.append(Row("EOS per switch, `generate --only eos` (load, plan, render, every check, write)",
                     f"{per_switch * 1000:.2f} ms CPU ({eos.cpu_s:.2f} s / {switches:,} switches)", "", None,
                     per_switch))
    if avd is None:
        found.append(Row("EOS per switch against pyavd", "pyavd not installed: not measured", ">= 100x", None))
    else:
        ratio = avd / per_switch
        found.append(Row("EOS per switch against pyavd (validate + get_device_config of a 64-port leaf)",
                         f"{ratio:.0f}x (pyavd {avd * 1000:.1f} ms per device)", ">= 100x", ratio >= 100, ratio))
    found += floor_rows(spec24, tmp=tmp)
    del plan

    if not scale:
        return [*found, Row("131,072 and 262,144 GPUs", "skipped (--skip-scale)", "", None)]
    per_gpu_24k = full.cpu_s / 24576
    for name, gpus, limit in (("131k", 131072, 20.0), ("262k", 262144, 45.0)):
        run = fabgen_process(_spec_file(name, tmp), tmp / name)
        found.append(Row(f"{gpus:,} GPUs, all targets, end to end", _seconds(run), f"< {limit:.0f} s CPU",
                         run.cpu_s < limit, run.cpu_s))
        if name == "262k":
            ratio = (run.cpu_s / gpus) / per_gpu_24k
            found.append(Row("262k per-GPU cost against the 24k fabric's",
                             f"{ratio:.2f}x ({run.cpu_s / gpus * 1e6:.0f} vs {per_gpu_24k * 1e6:.0f} us per GPU)",
                             "<= 1.2x", ratio <= 1.2, ratio))
            found.append(Row("262k peak RSS", _mb(run.peak_mb), "< 4 GB", run.peak_mb < 4096, run.peak_mb))
    return found


if __name__ == "__main__":  # python -m bench.generate --floors SPEC: one process's floor measurements, as JSON
    if sys.argv[1:2] != ["--floors"] or len(sys.argv) not in (3, 5):
        raise SystemExit("usage: python -m bench.generate --floors SPEC [TARGET SWITCHES]")
    only, sample = (sys.argv[3], int(sys.argv[4])) if len(sys.argv) == 5 else (None, 0)
    print(json.dumps(floor_measurements(Path(sys.argv[2]), only, sample)))
