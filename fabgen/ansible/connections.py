"""How Ansible reaches each kind of device: the ``ansible_connection`` / ``ansible_network_os`` of the inventory.

``fabgen inventory`` writes these as group vars (the ``hosts`` group and one
group per switch OS), so a play that configures devices picks the connection
the OS's own collection expects, and a play that only renders on the
controller overrides them with ``ansible_connection: local`` (play vars win
over inventory vars).

- EOS: Arista's collection ``arista.eos`` over eAPI (``ansible.netcommon.httpapi``,
  HTTPS, as AVD deploys); ``network_cli`` works too for ``eos_config``.
- Cumulus Linux: NVIDIA's collection ``nvidia.nvue`` drives the NVUE REST API
  (``nvidia.nvue.httpapi`` over ``ansible.netcommon.httpapi``, HTTPS on 8765).
- SONiC: there is no official collection for community SONiC.
  ``dellemc.enterprise_sonic`` drives Dell Enterprise SONiC's management
  framework (its KLISH CLI and REST API), which community images do not ship;
  fabgen's ``config_db.json`` is loaded with ``config load`` / ``config reload``
  over plain ssh, so the group gets ``ansible_connection: ssh`` and no network OS.
- GPU hosts are Linux servers: ``ssh``.
"""

from __future__ import annotations

from typing import Any, Final

HOSTS: Final[dict[str, Any]] = {"ansible_connection": "ssh"}

SWITCH_OS: Final[dict[str, dict[str, Any]]] = {
    "eos": {
        "ansible_connection": "ansible.netcommon.httpapi",
        "ansible_network_os": "arista.eos.eos",
        "ansible_httpapi_use_ssl": True,
    },
    "cumulus": {
        "ansible_connection": "ansible.netcommon.httpapi",
        "ansible_network_os": "nvidia.nvue.httpapi",
        "ansible_httpapi_use_ssl": True,
        "ansible_httpapi_port": 8765,
    },
    "sonic": {
        "ansible_connection": "ssh",
    },
}

COMMENTS: Final[dict[str, str]] = {
    "hosts": "GPU hosts: Linux servers over ssh.",
    "eos": "Arista EOS: the arista.eos collection over eAPI (HTTPS); network_cli works too.",
    "cumulus": "Cumulus Linux: NVIDIA's nvidia.nvue collection over the NVUE REST API (HTTPS, port 8765).",
    "sonic": "SONiC: no official collection for community SONiC; config_db.json is loaded over plain ssh.",
}
"""One line said above each group's vars in the generated inventory (why this connection)."""
