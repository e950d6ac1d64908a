"""CLI commands around the pipeline: ``init``, ``inventory``, ``diff``, ``ansible-path``.

:mod:`fabgen.cli` imports this module and calls :func:`register` with its
``command(name, handler, help)`` factory, so these commands share the CLI's
exit codes (0 ok, 1 difference, 2 bad input) and its error printing: handlers
raise :class:`~fabgen.errors.FabgenError` for bad input and never print a
traceback. Heavy imports stay inside the handlers so ``fabgen --help`` and
``fabgen ansible-path`` start fast.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

from fabgen.spec_arg import spec_path

EXIT_OK, EXIT_DIFFERENT, EXIT_INPUT = 0, 1, 2

CommandFactory = Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {number}")
    return number


def _cmd_init(args: argparse.Namespace) -> int:
    from fabgen.init_spec import starter_spec, write_starter

    to_stdout = args.output == "-"
    options = [*(["-o", args.output] if args.output != "spec.yaml" else []), "--os", args.os,
               "--hosts", str(args.hosts), "--rails", str(args.rails)]
    if args.name != "roce-starter":
        options += ["--name", args.name]
    text = starter_spec(args.os, args.hosts, args.rails, name=args.name,
                        file="spec.yaml" if to_stdout else args.output,
                        command_args=" " + " ".join(shlex.quote(o) for o in options))
    if to_stdout:
        sys.stdout.write(text)
        return EXIT_OK
    path = Path(args.output)
    write_starter(path, text, force=args.force)
    if not args.quiet:
        print(f"{path}: starter spec for {args.hosts} host(s) x {args.rails} rail(s) on {args.os}; "
              f"next: fabgen generate {shlex.quote(str(path))} -o out")
    return EXIT_OK


def _cmd_inventory(args: argparse.Namespace) -> int:
    from fabgen.inventory import inventory_yaml
    from fabgen.pipeline import load_spec, plan_fabric

    text = inventory_yaml(plan_fabric(load_spec(Path(args.spec))), args.spec)
    if not args.output or args.output == "-":
        sys.stdout.write(text)
        return EXIT_OK
    path = Path(args.output)
    try:
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            return EXIT_OK  # unchanged: keep the mtime, as generate does
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        from fabgen.errors import FabgenError, Problem

        raise FabgenError([Problem(f"cannot write: {exc.strerror or exc}", file=str(path))]) from None
    return EXIT_OK


def _cmd_diff(args: argparse.Namespace) -> int:
    from fabgen.diff import diff_specs, format_text
    from fabgen.pipeline import load_spec

    old, new = load_spec(Path(args.old)), load_spec(Path(args.new))
    result = diff_specs(old, new, targets=args.only or None, devices=args.device or None,
                        templates=Path(args.templates) if args.templates else None)
    if args.format == "json":
        print(json.dumps({"old": args.old, "new": args.new, **result.as_dict()}, indent=2))
    else:
        sys.stdout.write(format_text(result, patch=args.patch))
    return EXIT_DIFFERENT if result else EXIT_OK


def _cmd_ansible_path(args: argparse.Namespace) -> int:
    from fabgen.ansible import collection_dir, collections_path

    print(collection_dir() if args.collection else collections_path())
    return EXIT_OK


def register(command: CommandFactory) -> None:
    """Add this module's subcommands to the ``fabgen`` parser."""
    from fabgen.init_spec import MAX_RAILS, OS_CHOICES

    p = command("init", _cmd_init, "write a commented starter spec (a small rail-optimized RoCE cluster)")
    p.add_argument("-o", "--output", default="spec.yaml", metavar="FILE",
                   help="where to write it (default: spec.yaml; '-' for stdout)")
    p.add_argument("--os", choices=OS_CHOICES, default="eos", help="switch OS of every tier (default: eos)")
    p.add_argument("--hosts", type=_positive, default=4, metavar="N", help="number of GPU hosts (default: 4)")
    p.add_argument("--rails", type=_positive, default=4, metavar="R",
                   help=f"rails = GPUs and RoCE NICs per host, 1..{MAX_RAILS} (default: 4)")
    p.add_argument("--name", default="roce-starter", help="cluster name (default: roce-starter)")
    p.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    p.add_argument("-q", "--quiet", action="store_true")

    p = command("inventory", _cmd_inventory,
                "print an Ansible YAML inventory of the spec's hosts and switches (groups per tier, rail, pod, OS)")
    p.add_argument("spec", type=spec_path)
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE (only when it changes) instead of stdout")

    p = command("diff", _cmd_diff,
                "which devices' outputs change between two specs, and by how many lines; exit 1 when any does")
    p.add_argument("old", metavar="OLD_SPEC", type=spec_path)
    p.add_argument("new", metavar="NEW_SPEC", type=spec_path)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--patch", action="store_true", help="also print the unified diff of every changed file (text)")
    p.add_argument("--only", action="append", metavar="TARGET", help="compare only this target (repeatable)")
    p.add_argument("--device", action="append", metavar="NAME", help="compare only these devices (glob, repeatable)")
    p.add_argument("--templates", metavar="DIR", help="overlay directory of Jinja2 templates (for both specs)")

    p = command("ansible-path", _cmd_ansible_path,
                "print where the fabgen.fabgen Ansible collection is (for ANSIBLE_COLLECTIONS_PATH)")
    p.add_argument("--collection", action="store_true",
                   help="print the collection's own root instead (for ansible-galaxy collection build)")
