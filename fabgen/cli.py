"""``fabgen`` command line: a thin argparse front end over :mod:`fabgen.pipeline`.

Exit codes: 0 ok, 1 findings or drift, 2 bad input or usage. Input errors are
printed one per line as ``file:line:col: message``; no traceback reaches the
operator for bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from fabgen.errors import FabgenError, Problem
from fabgen.spec_arg import jobs_arg, spec_path

if TYPE_CHECKING:
    from fabgen.writer import Drift, WriteResult

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT = 0, 1, 2


def _cmd_validate(args: argparse.Namespace) -> int:
    from fabgen.pipeline import load_spec

    failed = False
    for path in args.spec:
        try:
            spec = load_spec(Path(path))
            from fabgen.pipeline import plan_fabric

            plan_fabric(spec)
        except FabgenError as exc:
            _print_error(exc)
            failed = True
        else:
            if not args.quiet:
                print(f"{path}: ok")
    return EXIT_INPUT if failed else EXIT_OK


def _cmd_plan(args: argparse.Namespace) -> int:
    from fabgen.pipeline import load_spec, plan_fabric
    from fabgen.plan.summary import summary, summary_table

    if args.detail and args.format != "json":
        raise FabgenError([Problem("--detail needs --format json", file="fabgen")])
    fabric = plan_fabric(load_spec(Path(args.spec)))
    if args.detail:
        from fabgen.plan.detail import write_detail

        write_detail(fabric, sys.stdout)
    elif args.format == "json":
        print(json.dumps(summary(fabric), indent=2, sort_keys=True))
    else:
        print(summary_table(fabric), end="")
    return EXIT_OK


def _cmd_schema(args: argparse.Namespace) -> int:
    from fabgen.schema import spec_schema_text

    text = spec_schema_text()
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _cmd_generate(args: argparse.Namespace) -> int:
    if args.templates and not Path(args.templates).is_dir():  # a typo must not fall back to the shipped templates
        raise FabgenError([Problem("--templates: no such directory", file=args.templates)])
    from fabgen.progress import reporting

    if args.device and not args.no_cache:  # the Ansible per-host path: served from fabgen.plan_cache when it can
        from fabgen.plan_cache import Request, generate_device

        with reporting(quiet=args.quiet):
            result = generate_device(Request(
                Path(args.spec), Path(args.output), tuple(args.device), tuple(args.only) if args.only else None,
                Path(args.templates) if args.templates else None, args.check, args.force, args.jobs))
        return _generate_result(args, result)
    from fabgen._gc import paused_gc

    with paused_gc():  # see _generate_without_collector
        return _generate_without_collector(args)


def _generate_without_collector(args: argparse.Namespace) -> int:
    """``generate`` with Python's cyclic collector off from the first import to the last file written.

    Why: the stages that allocate most (plan, render, write) pause the collector
    already; what ran with it on was the import of the pipeline (pydantic
    building the spec models, Jinja2, the targets: some 150,000 objects that
    live to the end), loading and validating, about 110 young and 10 older
    collections that walk those module objects again and again and find
    nothing (30 to 60 ms of a 24k run). Reference counting still frees
    everything; the garbage that only the collector could free (cycles made
    while importing and validating) is small, and the process ends right
    after (:func:`console`); called in-process, the collector is back on
    when this returns. A library caller of :func:`fabgen.pipeline.generate`
    is untouched.
    """
    with _no_pydantic_plugins():
        from fabgen.pipeline import generate, load_spec
    from fabgen.progress import reporting, stage
    from fabgen.user_cache import caches_off

    with reporting(quiet=args.quiet), caches_off() if args.no_cache else nullcontext():
        stage("loading the spec")
        spec = load_spec(Path(args.spec))
        result = generate(
            spec, Path(args.output), targets=args.only or None, devices=args.device or None,
            templates=Path(args.templates) if args.templates else None, check=args.check, force=args.force,
            jobs=args.jobs,
        )
    return _generate_result(args, result)


@contextmanager
def _no_pydantic_plugins() -> Iterator[None]:
    """Import the spec models without pydantic looking for plugins, unless ``PYDANTIC_DISABLE_PLUGINS`` says otherwise.

    Why: the first model pydantic builds makes it scan the entry points of every
    installed distribution for observability plugins (15 to 40 ms at each
    ``fabgen`` start, for none installed here). Plugins only watch validation;
    none changes what fabgen accepts or writes, and the command has nobody to
    report to. The variable is set only while the models are built (in
    ``fabgen.spec``, the only place fabgen makes pydantic validators), so no
    child process or later caller inherits it; an operator's own setting wins.

    With the variable at ``__all__`` pydantic's loader answers "no plugins"
    without reading any metadata, yet importing it imports ``importlib.metadata``
    (with ``email``, ``zipfile``, ``csv``: 20 to 30 ms, nothing else in a
    ``generate`` uses them). So for the same span the loader is
    :data:`_NO_PLUGINS`, which gives that same answer; it is taken out again
    after, so a model built later loads the real one.
    """
    import os

    key = "PYDANTIC_DISABLE_PLUGINS"
    if key in os.environ:
        yield
        return
    os.environ[key] = "__all__"
    stand_in = _NO_PLUGINS if sys.modules.setdefault(_PLUGIN_LOADER, _NO_PLUGINS) is _NO_PLUGINS else None
    try:
        yield
    finally:
        os.environ.pop(key, None)
        if stand_in is not None and sys.modules.get(_PLUGIN_LOADER) is stand_in:
            del sys.modules[_PLUGIN_LOADER]


def _get_no_plugins() -> tuple[()]:
    """``get_plugins()`` of pydantic's loader when ``PYDANTIC_DISABLE_PLUGINS`` is ``__all__``: none."""
    return ()


_PLUGIN_LOADER = "pydantic.plugin._loader"
_NO_PLUGINS = ModuleType(_PLUGIN_LOADER, "Stands in for pydantic's plugin loader while plugins are off (see cli.py).")
_NO_PLUGINS.get_plugins = _get_no_plugins  # type: ignore[attr-defined]
"""What pydantic imports from its loader (``get_plugins``, the only name; a test reads pydantic's source for others)."""


def _generate_result(args: argparse.Namespace, result: WriteResult | Drift) -> int:
    """Print what ``generate`` did (or the drift it found) and choose the exit code."""
    from fabgen.writer import Drift

    if isinstance(result, Drift):
        for path in result.added:
            print(f"added: {path}")
        for path in result.removed:
            print(f"removed: {path}")
        for diff in result.changed.values():
            sys.stdout.write(diff)
        if result:
            total = len(result.added) + len(result.removed) + len(result.changed)
            print(f"fabgen: {total} file(s) differ from {args.output}", file=sys.stderr)
            return EXIT_FINDINGS
        if not args.quiet:
            print(f"{args.output}: up to date")
        return EXIT_OK
    if not args.quiet:
        print(f"{args.output}: {len(result.written)} written, {len(result.unchanged)} unchanged, "
              f"{len(result.removed)} removed")
    return EXIT_OK


def _cmd_check_topo(args: argparse.Namespace) -> int:
    from fabgen.targets.nccl.topo_check import check_topology_file

    bad = False
    for path in args.file:
        problems = check_topology_file(Path(path))
        for problem in problems:
            print(problem, file=sys.stderr)
        bad = bad or bool(problems)
        if not problems and not args.quiet:
            print(f"{path}: ok")
    return EXIT_FINDINGS if bad else EXIT_OK


def _cmd_check_sonic(args: argparse.Namespace) -> int:
    from fabgen.targets.sonic.yang import check_sonic_files

    problems = check_sonic_files([Path(p) for p in args.file], Path(args.yang_dir))
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems and not args.quiet:
        for path in args.file:
            print(f"{path}: ok")
    return EXIT_FINDINGS if problems else EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fabgen", description="One spec for a RoCE GPU fabric: switches, NICs, NCCL.")
    parser.add_argument("--version", action="version", version=f"fabgen {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name: str, handler: Callable[[argparse.Namespace], int], help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=help_)
        p.set_defaults(handler=handler)
        return p

    p = command("validate", _cmd_validate, "check specs (syntax, types, references, that the fabric can be built)")
    p.add_argument("spec", nargs="+", type=spec_path)
    p.add_argument("-q", "--quiet", action="store_true")

    p = command("plan", _cmd_plan, "summarise the planned fabric: hosts, GPUs, pods, switches and links per tier")
    p.add_argument("spec", type=spec_path)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--detail", action="store_true",
                   help="with --format json: every device, port, peer and address (and BGP), streamed")

    p = command("schema", _cmd_schema, "print the JSON Schema of the spec (for YAML language servers)")
    p.add_argument("-o", "--output", help="write to this file instead of stdout")

    p = command("generate", _cmd_generate, "render every artifact into a directory (atomically), or --check it")
    p.add_argument("spec", type=spec_path)
    p.add_argument("-o", "--output", required=True, metavar="DIR")
    p.add_argument("--check", action="store_true", help="compare with DIR and print a diff; exit 1 on drift; write nothing")
    p.add_argument("--only", action="append", metavar="TARGET", help="render only this target (repeatable)")
    p.add_argument("--device", action="append", metavar="NAME",
                   help="render only these devices (glob, repeatable); a host profile's name selects its shared "
                        "files (hosts/_profiles/P/), which a host's install.json also names")
    p.add_argument("--templates", metavar="DIR", help="overlay directory of Jinja2 templates")
    p.add_argument("--force", action="store_true", help="write into a non-empty directory without a fabgen manifest")
    p.add_argument("-j", "--jobs", type=jobs_arg, default=1, metavar="N",
                   help="render in N worker processes (same output; worth it for thousands of devices)")
    p.add_argument("--no-cache", action="store_true",
                   help="neither read nor fill the on-disk caches (with --device, the rendered files; always, "
                        "the compiled templates); also FABGEN_CACHE_DIR=off")
    p.add_argument("-q", "--quiet", action="store_true")

    p = command("check-topo", _cmd_check_topo, "check NCCL topology XML files against NCCL's parser rules")
    p.add_argument("file", nargs="+")
    p.add_argument("-q", "--quiet", action="store_true")

    p = command("check-sonic", _cmd_check_sonic, "validate SONiC config_db.json files against YANG models")
    p.add_argument("file", nargs="+")
    p.add_argument("--yang-dir", required=True, metavar="DIR")
    p.add_argument("-q", "--quiet", action="store_true")

    for register in _extensions():
        register(command)
    return parser


def _extensions() -> list[Callable[..., None]]:
    """Command groups that live beside their subsystem (lint, ansible, ...)."""
    registers: list[Callable[..., None]] = []
    for module in ("fabgen.lint.commands", "fabgen.commands", "fabgen.twin.commands",
                   "fabgen.targets.sonic.commands", "fabgen.exports_commands"):
        try:
            imported = __import__(module, fromlist=["register"])
        except ModuleNotFoundError as exc:
            if not exc.name or not module.startswith(exc.name):
                raise
            continue
        registers.append(imported.register)
    return registers


def _version() -> str:
    from fabgen._version import __version__

    return __version__


def _print_error(exc: FabgenError) -> None:
    for line in exc.lines():
        print(line, file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except FabgenError as exc:
        _print_error(exc)
        return EXIT_INPUT
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:  # an unwritable or vanished output or template path: one line, not a traceback
        where = exc.filename if exc.filename is not None else "fabgen"
        print(Problem(f"{exc.strerror or exc}", file=str(where)), file=sys.stderr)
        return EXIT_INPUT


def console() -> int:
    """The ``fabgen`` command: :func:`main`, then leave the process without tearing its heap down.

    Why: after a large ``generate`` the interpreter's own shutdown (a last full
    collection, then freeing every module and object one by one) costs about
    0.1 s of CPU, a few per cent of the whole run, and buys nothing: fabgen
    holds no open file, no running thread or worker, and nothing registered to
    run at exit; the output tree is already swapped in. So once :func:`main`
    has returned, the standard streams are flushed and the process ends with
    :func:`os._exit` and main's exit code. Anything that escapes :func:`main`
    (argparse's usage exit, a bug's traceback) takes the ordinary way out, and
    so does a run under coverage or a profiler (``python -m cProfile -m
    fabgen.cli``), whose results are written at exit.
    """
    import os

    from fabgen._gc import ending_by_exit

    ending_by_exit()  # large results (the plan) are then kept to the end, not freed just before it
    code = main()
    if "coverage" in sys.modules or sys.getprofile() is not None or sys.gettrace() is not None:
        return code
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # the reader went away (``fabgen ... | head``): main's code stands, as for a print
        pass
    except OSError:  # a full disk behind a redirect: let the interpreter report it and exit as it always does
        return code
    os._exit(code)


if __name__ == "__main__":
    raise SystemExit(console())
