"""Fixtures of the Ansible tests: the collection as Galaxy ships it, built and installed once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabgen.ansible import _core, collection_dir
from tests.ansible.support import galaxy


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    """Each test starts with an empty spec/plan cache, so cache counts are the test's own."""
    _core.cache_clear()


@pytest.fixture(scope="session")
def collection_artifact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``ansible-galaxy collection build`` of the package's collection source: the tarball Galaxy would get."""
    work = tmp_path_factory.mktemp("galaxy-build")
    galaxy("collection", "build", str(collection_dir()), "--output-path", str(work), home=work / "home")
    (artifact,) = work.glob("fabgen-fabgen-*.tar.gz")
    return artifact


@pytest.fixture(scope="session")
def installed_collection(collection_artifact: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built artifact installed with ``ansible-galaxy collection install``: a collections path (offline)."""
    root = tmp_path_factory.mktemp("galaxy-install")
    galaxy("collection", "install", str(collection_artifact), "-p", str(root / "collections"), home=root / "home")
    assert (root / "collections" / "ansible_collections" / "fabgen" / "fabgen" / "MANIFEST.json").is_file()
    return root / "collections"


