"""``fabgen twin up|verify|down|run SPEC``: the CLI of :mod:`fabgen.twin`.

Exit codes as everywhere in fabgen: 0 ok, 1 a check failed (or ``down`` could
not remove something), 2 cannot run (not root, FRR missing, not Linux, bad
spec). ``run`` always tears down, whatever ``verify`` found. ``--json FILE``
writes the report (``-`` for stdout).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fabgen.spec_arg import spec_path

EXIT_OK, EXIT_FAILED, EXIT_INPUT = 0, 1, 2

CommandFactory = Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]


def _say(args: argparse.Namespace) -> Callable[[str], None]:
    def say(line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stderr if args.json == "-" else sys.stdout, flush=True)

    return say


def _load(args: argparse.Namespace) -> tuple[Any, Any, str, str]:
    from fabgen.pipeline import load_spec, plan_fabric, spec_digest
    from fabgen.twin.names import default_prefix, valid_prefix
    from fabgen.twin.system import TwinError

    spec = load_spec(Path(args.spec))
    digest = spec_digest(spec)
    prefix = args.prefix or default_prefix(digest)
    if not valid_prefix(prefix):
        raise TwinError(f"--prefix {prefix!r}: 1-20 of a-z, 0-9 and '-', starting with a letter")
    return spec, plan_fabric(spec), digest, prefix


def _write_report(args: argparse.Namespace, report: dict[str, Any]) -> None:
    if not args.json:
        return
    text = json.dumps(report, indent=2, sort_keys=True) + "\n"
    if args.json == "-":
        sys.stdout.write(text)
    else:
        Path(args.json).write_text(text, encoding="utf-8")


def _topology_report(topology: Any) -> dict[str, Any]:
    return {"namespaces": dict(topology.netns), "interfaces": {d: dict(m) for d, m in topology.ifnames.items()
                                                                if any(k != v for k, v in m.items())}}


def _up(args: argparse.Namespace, report: dict[str, Any]) -> Any:
    from fabgen.twin.lifecycle import up

    _, fabric, digest, prefix = _load(args)
    say = _say(args)
    host_files = Path(args.host_files) if args.host_files else None
    result = up(fabric, spec=str(args.spec), spec_sha256=digest, prefix=prefix, log=say, timeout=args.timeout,
                host_files=host_files)
    say(f"twin {prefix} up in {result.timings_s['up']:.2f} s: " + ", ".join(
        f"{k} {v:.2f} s" for k, v in result.timings_s.items() if k != "up"))
    report.update(prefix=prefix, spec=str(args.spec), **_topology_report(result.topology),
                  timings_s=dict(result.timings_s))
    return fabric, result


def _verify(args: argparse.Namespace, report: dict[str, Any], fabric: Any, topology: Any, state: Any) -> bool:
    from fabgen.twin.verify import verify

    start = time.perf_counter()
    result = verify(fabric, topology, state, timeout=args.timeout, cable_cut=not args.no_cut, log=_say(args))
    report.setdefault("timings_s", {})["verify"] = round(time.perf_counter() - start, 3)
    sessions = next((c for c in result.checks if c.name == "bgp-sessions"), None)
    if sessions is not None:
        report["timings_s"]["converge"] = round(sessions.seconds, 3)
    report["checks"] = [c.as_dict() for c in result.checks]
    report["ok"] = result.ok
    return result.ok


def _cmd_up(args: argparse.Namespace) -> int:
    report: dict[str, Any] = {"action": "up"}
    _up(args, report)
    _write_report(args, report)
    return EXIT_OK


def _booted(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    from fabgen.twin.state import load_state
    from fabgen.twin.system import TwinError, preflight
    from fabgen.twin.topology import twin_topology

    preflight()
    _, fabric, digest, prefix = _load(args)
    state = load_state(prefix)
    if state is None or state.status != "up":
        raise TwinError(f"twin {prefix} is not up; run 'fabgen twin up {args.spec}' first")
    if state.spec_sha256 != digest:
        raise TwinError(f"twin {prefix} was booted from another version of {state.spec}; run 'fabgen twin down' "
                        "and up again")
    return fabric, twin_topology(fabric, prefix), state


def _cmd_verify(args: argparse.Namespace) -> int:
    fabric, topology, state = _booted(args)
    report: dict[str, Any] = {"action": "verify", "prefix": state.prefix, "spec": str(args.spec),
                              **_topology_report(topology)}
    ok = _verify(args, report, fabric, topology, state)
    _write_report(args, report)
    return EXIT_OK if ok else EXIT_FAILED


def _down_report(state: Any, report: dict[str, Any], say: Callable[[str], None]) -> bool:
    from fabgen.twin.lifecycle import down

    start = time.perf_counter()
    result = down(state)
    report.setdefault("timings_s", {})["down"] = round(time.perf_counter() - start, 3)
    report["down"] = {"processes_stopped": result.killed, "namespaces_deleted": result.netns_deleted,
                      "sysctls_restored": result.sysctls_restored, "problems": result.problems}
    say(f"twin {state.prefix} down: {result.killed} processes stopped, {result.netns_deleted} namespaces deleted"
        + (f", restored {', '.join(result.sysctls_restored)}" if result.sysctls_restored else ""))
    for problem in result.problems:
        say(f"FAIL {problem}")
    return not result.problems


def _cmd_down(args: argparse.Namespace) -> int:
    from fabgen.twin.state import load_state
    from fabgen.twin.system import preflight

    preflight(need_frr=False)
    _, _, _, prefix = _load(args)
    state = load_state(prefix)
    say = _say(args)
    report: dict[str, Any] = {"action": "down", "prefix": prefix}
    if state is None:
        say(f"twin {prefix} is not up; nothing to do")
        _write_report(args, report)
        return EXIT_OK
    ok = _down_report(state, report, say)
    _write_report(args, report)
    return EXIT_OK if ok else EXIT_FAILED


def _cmd_run(args: argparse.Namespace) -> int:
    report: dict[str, Any] = {"action": "run"}
    fabric, result = _up(args, report)
    try:
        ok = _verify(args, report, fabric, result.topology, result.state)
    finally:
        ok_down = _down_report(result.state, report, _say(args))
        _write_report(args, report)
    return EXIT_OK if ok and ok_down else EXIT_FAILED


def register(command: CommandFactory) -> None:
    """Add ``fabgen twin`` and its four actions to the ``fabgen`` parser."""
    twin = command("twin", lambda _: EXIT_INPUT,
                   "boot the plan in network namespaces with FRR and check that it routes (root, Linux, frr)")
    actions = twin.add_subparsers(dest="twin_action", required=True, parser_class=type(twin))
    for name, handler, help_ in (
        ("up", _cmd_up, "create namespaces, veth pairs and addresses; start zebra and bgpd per switch"),
        ("verify", _cmd_verify, "check sessions, ECMP, same-rail pings and a cable cut on a twin that is up"),
        ("down", _cmd_down, "stop the twin's daemons, delete its namespaces, restore the sysctls it raised"),
        ("run", _cmd_run, "up, verify and down in one go (down always runs)"),
    ):
        p = actions.add_parser(name, help=help_, description=help_)
        p.set_defaults(handler=handler)
        p.add_argument("spec", metavar="SPEC", type=spec_path)
        p.add_argument("--prefix", metavar="P", help="namespace prefix (default: fg- and 6 hex digits of the spec's hash)")
        p.add_argument("--json", metavar="FILE", help="write the JSON report here ('-' for stdout)")
        p.add_argument("--timeout", type=float, default=30.0, metavar="S",
                       help="bound of each wait and each polled check, in seconds (default: 30)")
        p.add_argument("-q", "--quiet", action="store_true")
        if name in ("up", "run"):
            p.add_argument("--host-files", metavar="DIR",
                           help="configure the hosts from the host network files under DIR (a 'fabgen generate' "
                                "output) instead of rendering them afresh")
        if name in ("verify", "run"):
            p.add_argument("--no-cut", action="store_true", help="skip the cable cut and restore")
