#!/usr/bin/python
"""Documentation stub for the ``fabgen_render`` action plugin.

The work is done on the controller by ``plugins/action/fabgen_render.py``; this
file exists so ``ansible-doc fabgen_render`` and argument checks know the
options. Ansible never runs it on a managed node.
"""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: fabgen_render
short_description: Write a device's fabgen files (switch configs, NIC scripts, NCCL files) on the controller
description:
  - Loads a fabgen cluster spec (cached per file and modification time within the process), renders the files
    of one device (or of every device matching a glob) and writes them under O(dest) in the layout of
    C(fabgen generate).
  - A file is written only when its content changed, so C(changed) is honest; each write is atomic.
  - A host gets its own files and those of its host profile (the NCCL topology XML); a switch gets its own.
  - Errors in the spec fail the task with the spec's file:line:col.
version_added: "0.1.0"
options:
  spec:
    description: Path of the cluster spec (YAML). Relative paths resolve against the playbook's directory.
    type: path
    required: true
  dest:
    description: Directory on the controller that receives the files.
    type: path
    required: true
  device:
    description: Host or switch name, or a glob (C(leaf-*), C(*)). Defaults to C(inventory_hostname).
    type: raw
  targets:
    description: Render only these targets (for example C(nccl-env)); every target when omitted.
    type: list
    elements: str
  templates:
    description: Overlay directory of Jinja2 templates, as C(fabgen generate --templates).
    type: path
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
author:
  - fabgen
"""

EXAMPLES = r"""
- name: Render this device's files
  fabgen_render:
    spec: "{{ playbook_dir }}/../lab/spec.yaml"
    dest: "{{ playbook_dir }}/out"
"""

RETURN = r"""
files:
  description: Every file of the device, relative to dest.
  type: list
  elements: str
  returned: success
changed_files:
  description: Files whose content changed (or would change, in check mode).
  type: list
  elements: str
  returned: success
"""

if __name__ == "__main__":
    raise SystemExit("fabgen_render is an action plugin; it runs on the Ansible controller")
