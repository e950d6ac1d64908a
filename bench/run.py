#!/usr/bin/env python3
"""Benchmark fabgen stage by stage (a script, not a test).

    python bench/run.py [--markdown] [--skip-scale] [--json OUT]        # every figure of issue 17, one table
    python bench/run.py --scenario NAME... [--repeat N] [--json OUT]     # stage by stage, per scenario

Without ``--scenario`` it prints one table: each figure of the performance
issue (name, measured, target, pass/fail), from the ``rows()`` function of each
bench module present (``bench/generate.py`` here; ``bench/device.py`` and
``bench/twin.py`` when they have one). ``--markdown`` prints it as the
README's table, with the machine and the command.

Each stage is timed in-process with ``time.perf_counter``; the table shows the
median of ``--repeat`` runs. Peak memory is the process's peak RSS from
``resource.getrusage`` (ru_maxrss), read after each scenario; scenarios run in
separate processes so each peak is its own.

Scenarios: ``lab``; ``llama3-24k`` and ``meta-24k`` (the bundled examples);
``131k`` and ``262k`` (131,072 and 262,144 GPUs on 128-port switches, generated
on the fly from the 24k spec); ``sonic-24k`` and ``cumulus-24k`` (the 24k spec's GPUs on the
switches of examples/sonic-pod and examples/cumulus-pod, for the sonic and nvue floors); ``floor``
(the EOS configs of the 24k fabric written by plain string joins, no templates:
the cost of just producing the bytes, see ``bench/floor_eos.py``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

ROOT = Path(__file__).resolve().parents[1]
P = ParamSpec("P")
T = TypeVar("T")
sys.path.insert(0, str(ROOT))

SCENARIOS = ("lab", "llama3-24k", "meta-24k", "131k", "262k", "sonic-24k", "cumulus-24k", "floor")
_SCALED = {"131k": (16384, "10.0.0.0/11"), "262k": (32768, "10.0.0.0/10")}
"""Scenario -> (hosts, p2p pool): the 24k spec on 128-port switches, pools sized for position blocks."""
_EOS_TIER = "{os: eos, model: 7060DX5-64S, ports: 64, speed: 400G}"
_OTHER_OS = {
    "sonic-24k": ("{os: sonic, model: SN5600, hwsku: Mellanox-SN5600-O128, ports: 128, speed: 400G}",
                  (("    mgmt: 172.16.0.0/19       # 4,096 hosts + 1,024 + 1,024 + 512 positions\n",
                    "    mgmt: 172.16.0.0/19       # 4,096 hosts + 1,024 + 1,024 + 512 positions\n"
                    "    mgmt_gateway: 172.16.31.254\n"),)),
    "cumulus-24k": ("{os: cumulus, model: SN5600, asic: spectrum4, ports: 64, speed: 400G}",
                    (("{detect: 200ms, restore: 400ms,", "{detect: 300ms, restore: 100ms,"),)),
}
"""Scenario -> (every tier, other edits): the 24k spec's 24,576 GPUs on the switches of examples/sonic-pod
(SN5600 as Mellanox-SN5600-O128, 128 x 400G, a management gateway) or examples/cumulus-pod (SN5600, 64 swp
ports, NVUE's own watchdog timing), so the sonic and nvue targets have a 24k fabric to render."""


def _spec_text(name: str) -> tuple[str, str]:
    if name in ("lab", "llama3-24k", "meta-24k", "floor"):
        example = "llama3-24k" if name == "floor" else name
        path = ROOT / "examples" / example / "spec.yaml"
        return str(path), path.read_text()
    if name in _SCALED:
        hosts, p2p = _SCALED[name]
        text = (ROOT / "examples" / "llama3-24k" / "spec.yaml").read_text()
        text = text.replace("count: 3072", f"count: {hosts}")
        text = text.replace("ports: 64", "ports: 128")
        text = text.replace("p2p: 10.0.0.0/14", f"p2p: {p2p}")
        text = text.replace("loopbacks: 10.254.0.0/20", "loopbacks: 10.200.0.0/16")
        text = text.replace("mgmt: 172.16.0.0/19", "mgmt: 172.16.0.0/16")
        return f"{name}.yaml", text
    if name in _OTHER_OS:
        tier, edits = _OTHER_OS[name]
        text = (ROOT / "examples" / "llama3-24k" / "spec.yaml").read_text()
        for old, new in ((_EOS_TIER, tier), *edits):
            if old not in text:
                raise SystemExit(f"{name}: examples/llama3-24k/spec.yaml no longer has {old!r}")
            text = text.replace(old, new)
        return f"{name}.yaml", text
    raise SystemExit(f"unknown scenario {name!r} (known: {', '.join(SCENARIOS)})")


def _time(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> tuple[float, T]:
    """Seconds ``fn(*args, **kwargs)`` took, and its result; arguments are bound at the call, not in a closure,
    so no loop variable is captured late."""
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - start, result


def run_scenario(name: str, repeat: int) -> dict[str, Any]:
    from bench.generate import warm_templates
    from fabgen.lint.engine import lint
    from fabgen.pipeline import __version__
    from fabgen.plan import build_plan
    from fabgen.source import load_source
    from fabgen.spec import validate_spec
    from fabgen.targets.registry import select_targets
    from fabgen.targets.render import render_files
    from fabgen.user_cache import active_cache_dir
    from fabgen.writer import write_tree

    file, text = _spec_text(name)
    samples: dict[str, list[float]] = {}
    warm_templates()  # the first repeat's renders read compiled templates from disk, as a new process would
    facts: dict[str, Any] = {"templates": "template cache warm" if active_cache_dir() else "template cache off"}
    for _ in range(repeat):
        gc.collect()
        t, doc = _time(load_source, file, text=text)
        samples.setdefault("load", []).append(t)
        t, spec = _time(validate_spec, doc)
        samples.setdefault("validate", []).append(t)
        t, fabric = _time(build_plan, spec, doc)
        samples.setdefault("plan", []).append(t)
        if name == "floor":
            from bench.floor_eos import floor_files
            from fabgen.targets.environment import environment
            from fabgen.targets.eos.config import render_eos

            env = environment()
            eos_switches = [s for s in fabric.switches if s.os == "eos"]
            t, floor = _time(floor_files, fabric)
            samples.setdefault("eos by string joins (floor)", []).append(t)
            t, _ = _time(list, (render_eos(env, fabric, s) for s in eos_switches))
            samples.setdefault("eos by templates", []).append(t)
            t, (rendered, _) = _time(render_files, fabric, ["eos"])
            samples.setdefault("eos target (templates + check)", []).append(t)
            assert floor == rendered, "floor must produce the same bytes as the eos target"
            facts.update(files=len(floor), bytes=sum(len(v) for v in floor.values()))
            continue
        files: dict[str, str] = {}
        owners: dict[str, tuple[str, str]] = {}
        for target in select_targets(None):  # what `fabgen generate` renders: opt-in targets (avd) are not in it
            t, (produced, owned) = _time(render_files, fabric, [target.name])
            samples.setdefault(f"render {target.name}", []).append(t)
            files.update(produced)
            owners.update(owned)
        t, _ = _time(lint, spec, fabric)
        samples.setdefault("lint", []).append(t)
        with tempfile.TemporaryDirectory(dir=os.environ.get("FABGEN_BENCH_TMP")) as tmp:
            out = Path(tmp) / "out"
            t, _ = _time(write_tree, files, out, owners, {"fabgen_version": __version__})
            samples.setdefault("write", []).append(t)
        facts.update(files=len(files), bytes=sum(len(v.encode()) for v in files.values()))
    gpus = sum(len(spec.host_profiles[h.profile].gpus) for h in fabric.hosts)
    stages = {stage: statistics.median(values) for stage, values in samples.items()}
    pipeline = [k for k in stages if k in ("load", "validate", "plan", "write") or k.startswith("render ")]
    if name == "floor":
        pipeline = []
    return {
        "scenario": name, "gpus": gpus, "hosts": len(fabric.hosts), "switches": len(fabric.switches), **facts,
        "stages_s": stages, "total_s": sum(stages[k] for k in pipeline),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "repeat": repeat,
    }


def _table(results: list[dict[str, Any]]) -> str:
    from bench.rows import machine
    from fabgen.pipeline import __version__

    lines = [f"fabgen {__version__} on {machine()}; median of N runs; peak RSS = ru_maxrss", ""]
    for r in results:
        lines.append(f"{r['scenario']}: {r['gpus']:,} GPUs, {r['hosts']:,} hosts, {r['switches']:,} switches, "
                     f"{r.get('files', 0):,} files, {r.get('bytes', 0) / 1e6:.1f} MB, N={r['repeat']}, "
                     f"peak RSS {r['peak_rss_mb']:.0f} MB, {r.get('templates', 'template cache unknown')}")
        for stage, seconds in r["stages_s"].items():
            lines.append(f"  {stage:<28} {seconds * 1000:>10.1f} ms")
        lines.append(f"  {'total (load -> write)':<28} {r['total_s'] * 1000:>10.1f} ms")
        lines.append("")
    return "\n".join(lines)


ROW_MODULES = ("bench.generate", "bench.floor_write", "bench.plan", "bench.device", "bench.lint_deployed", "bench.twin")
"""Bench modules whose ``rows()`` make the figures table; a missing module or one without ``rows`` is skipped."""


def figure_rows(skip_scale: bool) -> list[Any]:
    import importlib

    found: list[Any] = []
    for name in ROW_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        rows = getattr(module, "rows", None)
        if rows is None:
            continue
        if name == "bench.generate":
            found += rows(scale=not skip_scale)
        elif name == "bench.plan" and skip_scale:
            found += rows(names=("llama3-24k",))
        else:
            found += rows()
    return found


def figures(args: argparse.Namespace) -> int:
    from bench.rows import machine, markdown_table, removals_deferred, text_table

    command = "python bench/run.py" + (" --skip-scale" if args.skip_scale else "")
    where = machine()
    with removals_deferred():  # no row measures its writes right after another row's trees were removed
        rows = figure_rows(args.skip_scale)
    if args.markdown:
        print(f"Measured with `{command}` on {where}; CPU time (user + sys) of each process, wall time beside it.\n")
        print(markdown_table(rows))
    else:
        print(f"{command}\n{where}\n")
        print(text_table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": where, "command": command,
                                               "rows": [vars(r) for r in rows]}, indent=2) + "\n")
    return 0  # a missed target is a figure in the table, not a failure of the bench


def _compile_fabgen() -> None:
    """Measure fabgen as ``pip install`` leaves it: with its modules' bytecode compiled.

    A process under ``PYTHONDONTWRITEBYTECODE=1`` (set on the machines this
    bench ran on) never writes ``__pycache__``, so in a fresh checkout every
    ``fabgen`` process would compile its modules from source (about 0.13 s, and
    0.04 s of a 0.2 s ``--device`` cache hit). The variable stops writing, not
    reading, so compiling once here is enough; ``__pycache__`` is git-ignored.
    """
    import compileall

    compileall.compile_dir(str(ROOT / "fabgen"), quiet=1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", action="append", choices=SCENARIOS)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", metavar="OUT")
    parser.add_argument("--markdown", action="store_true", help="the figures table as the README's markdown")
    parser.add_argument("--skip-scale", action="store_true", help="leave out the 131k and 262k runs")
    parser.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    _compile_fabgen()
    if not args.scenario:
        return figures(args)
    names = args.scenario
    if args.in_process:
        print(json.dumps(run_scenario(names[0], args.repeat)))
        return 0
    results = []
    for name in names:
        proc = subprocess.run([sys.executable, __file__, "--in-process", "--scenario", name, "--repeat", str(args.repeat)],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr)
            return proc.returncode
        results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    print(_table(results))
    if args.json:
        from bench.rows import machine

        Path(args.json).write_text(json.dumps({"machine": machine(), "results": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
