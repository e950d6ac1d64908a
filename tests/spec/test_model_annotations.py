"""The spec's pydantic models are built from evaluated annotations, not strings (see :mod:`fabgen.spec.common`).

Why a test: ``from __future__ import annotations`` is the house style elsewhere and
would come back unnoticed; in a model module it makes pydantic compile and
evaluate every field's annotation at each start (30 to 40 ms of a run).
"""

from __future__ import annotations

import ast
from pathlib import Path

import fabgen.spec

SPEC = Path(fabgen.spec.__file__).parent


def _defines_models(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.ClassDef) and any(
        isinstance(base, ast.Name) and base.id in {"SpecModel", "BaseModel"} for base in node.bases)
        for node in tree.body)


def _future_annotations(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.ImportFrom) and node.module == "__future__"
               and any(alias.name == "annotations" for alias in node.names) for node in tree.body)


def test_no_model_module_defers_its_annotations() -> None:
    model_modules = [path for path in sorted(SPEC.glob("*.py"))
                     if _defines_models(ast.parse(path.read_text(encoding="utf-8")))]
    assert len(model_modules) >= 8  # the test looks where the models are
    deferred = [path.name for path in model_modules
                if _future_annotations(ast.parse(path.read_text(encoding="utf-8")))]
    assert deferred == []


def test_the_models_annotations_are_evaluated() -> None:
    """What the rule buys: pydantic finds real types, not strings it has to compile."""
    from fabgen.spec.cluster import ClusterSpec

    assert not any(isinstance(hint, str) for hint in ClusterSpec.__annotations__.values())
