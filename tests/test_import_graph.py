"""fabgen's modules import each other without a cycle.

The graph holds every import written at module level, type-only ones
(``if TYPE_CHECKING:``) included, since they tie the modules' designs together
just the same; imports inside functions are deferred on purpose (start-up time)
and are left out. Importing ``a.b.c`` also runs ``a`` and ``a.b``, so a module
depends on the packages above what it imports.
"""

from __future__ import annotations

import ast
from pathlib import Path

import fabgen

PACKAGE = Path(fabgen.__file__).resolve().parent


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _module_level(tree: ast.Module) -> list[ast.stmt]:
    """Statements run at import: the top level and the bodies of top-level ``if``/``try``."""
    out: list[ast.stmt] = []
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop(0)
        out.append(node)
        if isinstance(node, ast.If):
            pending[:0] = [*node.body, *node.orelse]
        elif isinstance(node, ast.Try):
            pending[:0] = [*node.body, *node.orelse, *node.finalbody, *(s for h in node.handlers for s in h.body)]
    return out


def import_graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _module_level(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                parts = target.split(".")
                for depth in range(1, len(parts) + 1):
                    dependency = ".".join(parts[:depth])
                    if dependency in modules and dependency != name and not name.startswith(dependency + "."):
                        graph[name].add(dependency)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_no_import_cycle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_graph_sees_a_planted_cycle() -> None:
    graph = import_graph()
    assert "fabgen.units" in graph["fabgen.spec.fabric"]  # spec/fabric.py: from fabgen.units import Speed
    assert {"fabgen.targets", "fabgen.targets.nccl"} <= graph["fabgen.spec.nccl_checks"]  # packages above an import
    graph["fabgen.units"].add("fabgen.spec.fabric")
    cycle = find_cycle(graph)
    assert cycle is not None and "fabgen.units" in cycle
