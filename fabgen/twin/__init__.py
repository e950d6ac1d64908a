"""``fabgen twin``: boot the plan on one Linux machine and check that it routes.

A network namespace per switch and per host, a veth pair per planned cable at
the plan's MTU and addresses, real FRR (zebra and bgpd, Debian's ``frr``) on
every switch configured from the routing plan, hosts configured with one
routing table and one ``from ADDR`` rule per backend NIC. ``verify`` then checks
sessions, ECMP, same-rail reachability and a cable cut; ``down`` removes exactly
what ``up`` recorded.

Modules: :mod:`~fabgen.twin.names` (Linux names), :mod:`~fabgen.twin.topology`
(the twin as data, pure), :mod:`~fabgen.twin.frr` (daemon configs),
:mod:`~fabgen.twin.system` (bounded commands, namespaces, processes),
:mod:`~fabgen.twin.state` (what was created), :mod:`~fabgen.twin.lifecycle`
(up, down), :mod:`~fabgen.twin.probe` (many pings at once),
:mod:`~fabgen.twin.verify` (the checks), :mod:`~fabgen.twin.commands` (CLI).
"""
