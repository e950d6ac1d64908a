# Copyright: fabgen contributors
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Documentation of ``fabgen.fabgen.render``; the work is done by ``plugins/action/render.py``.

The action runs on the controller, where fabgen is installed; this file only
tells ``ansible-doc`` and ``ansible-test`` what the options are, and is never
sent to a managed node. It holds nothing but the documentation on purpose:
``ansible-test sanity`` (validate-modules) accepts a docs-only module that
backs an action plugin, and checks the docs against its schema.
"""

DOCUMENTATION = r"""
---
module: render
short_description: Write a device's fabgen files (switch configs, NIC scripts, NCCL files) on the controller
description:
  - Loads a fabgen cluster spec, renders the files of one device (or of every device matching a glob) and writes
    them under O(dest) in the layout of C(fabgen generate). Runs on the Ansible controller; nothing is sent to the
    device, so the play needs no connection to it (set C(ansible_connection=local) for the play).
  - The spec may be a path, YAML text, or the spec itself as data (a mapping, for example built from inventory
    vars). A loaded spec and its plan are cached per file and modification time, or per content for text and
    data, within each Ansible worker process.
  - A file is written only when its content changed, so RV(ignore:changed) is true only then; each write is atomic
    (temporary file and rename) and never follows a symlink inside O(dest).
  - A host gets its own files and those of its host profile (the NCCL topology XML); a switch gets its own.
  - An invalid spec fails the task with the spec's C(file:line:col) lines; a spec given as data is named
    C(<inventory>) and each message ends with the key path, for example C((at qos.classes.roce.dscp[0])).
  - Needs the C(fabgen) Python package (same version as this collection) in the Python that runs Ansible.
version_added: "0.1.0"
options:
  spec:
    description:
      - The cluster spec. A string without a newline is a path (relative paths resolve against the playbook's
        directory); a string with a newline is the spec's YAML text; a mapping is the spec as data.
    type: raw
    required: true
  dest:
    description: Directory on the controller that receives the files. Relative paths resolve against the playbook's
      directory.
    type: path
    required: true
  device:
    description:
      - Host or switch name, a glob (C(leaf-*), C(*)), or a list of them. Defaults to C(inventory_hostname).
      - With a glob and C(run_once), one task renders the whole fabric in one process (plans the spec once).
    type: raw
  targets:
    description: Render only these targets (for example C(nccl-env)); every target when omitted.
    type: list
    elements: str
  templates:
    description: Overlay directory of Jinja2 templates, as C(fabgen generate --templates).
    type: path
attributes:
  action:
    description: Runs on the controller as an action plugin; this module file holds only its documentation.
    support: full
  check_mode:
    description: Reports which files would change, and returns changed, without writing anything.
    support: full
  diff_mode:
    description: Returns the before and after text of every file that changes (or would change in check mode).
    support: full
notes:
  - Run with C(--check --diff) to review what a spec change does to every device before writing.
seealso:
  - name: fabgen's README
    description: The spec, the targets and the layout of the generated files.
    link: https://example.invalid/fabgen#readme
author:
  - fabgen contributors (@fabgen)
"""

EXAMPLES = r"""
- name: Render every device's files on the controller
  hosts: all
  gather_facts: false
  vars:
    ansible_connection: local
  tasks:
    - name: Write this device's files
      fabgen.fabgen.render:
        spec: "{{ playbook_dir }}/spec.yaml"
        dest: "{{ playbook_dir }}/out"

- name: The spec as data, from inventory vars (a mapping shaped like spec.yaml)
  fabgen.fabgen.render:
    spec: "{{ fabgen_spec_data }}"
    dest: /srv/fabgen/out
    targets: [nccl-env]

- name: The whole fabric in one task and one process
  fabgen.fabgen.render:
    spec: "{{ playbook_dir }}/spec.yaml"
    dest: "{{ playbook_dir }}/out"
    device: "*"
  run_once: true
"""

RETURN = r"""
dest:
  description: The directory the files were written to (absolute).
  type: str
  returned: success
  sample: /srv/fabgen/out
device:
  description: The device name or glob that was rendered.
  type: raw
  returned: success
  sample: leaf-r0-p00-01
files:
  description: Every file of the device, relative to O(dest), sorted.
  type: list
  elements: str
  returned: success
  sample: [switches/leaf-r0-p00-01.cfg]
changed_files:
  description: Files whose content changed (or would change, in check mode), relative to O(dest), sorted.
  type: list
  elements: str
  returned: success
  sample: [hosts/_profiles/lab-node/nccl.conf]
"""
