"""Ansible integration: the ``fabgen.fabgen`` collection, shipped inside the package.

The collection's source is ``ansible_collections/fabgen/fabgen/`` next to this
file, so the wheel carries it and an installed fabgen can serve it straight to
Ansible without Galaxy::

    export ANSIBLE_COLLECTIONS_PATH=$(fabgen ansible-path)

or be built into a Galaxy artifact (``ansible-galaxy collection build
$(fabgen ansible-path --collection)``). Its plugins are thin shells (as in
Arista AVD): they import fabgen lazily, normalise Ansible's inputs with a JSON
round trip and turn every fabgen error into an Ansible error carrying the
spec's ``file:line:col``. The work itself lives in :mod:`fabgen.ansible._core`,
which is plain Python and is tested without Ansible.

This module imports nothing heavy: the CLI calls it to print a path.
"""

from __future__ import annotations

from pathlib import Path

NAMESPACE = "fabgen"
NAME = "fabgen"


def collections_path() -> Path:
    """The directory to put on ``ANSIBLE_COLLECTIONS_PATH`` (it holds ``ansible_collections/``)."""
    return Path(__file__).resolve().parent


def collection_dir() -> Path:
    """The collection's own root (``galaxy.yml``, ``plugins/``): what ``ansible-galaxy collection build`` takes."""
    return collections_path() / "ansible_collections" / NAMESPACE / NAME
