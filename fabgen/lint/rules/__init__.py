"""Rule families, one module each: the functions here are the rules; :mod:`fabgen.lint.registry` lists them.

* :mod:`.traffic` FG1xx: switches, NICs and NCCL agree on RoCE's and CNPs' classes.
* :mod:`.rails` FG2xx: rails as planned, NIC/GPU locality, NCCL_IB_HCA.
* :mod:`.wiring` FG25x: observed cabling against the plan (``--wiring``).
* :mod:`.capacity` FG3xx: oversubscription, radix, top tier.
* :mod:`.nccl` FG4xx: hand-set NCCL variables.
* :mod:`.drift` FG5xx: deployed files against the plan (``--deployed``).
"""
