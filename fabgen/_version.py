"""fabgen's version, in a module of its own so reading it imports nothing else.

The one-device cache (:mod:`fabgen.plan_cache`) keys its entries by it on a path
that must not pay for importing pydantic, Jinja2 and the planner.
"""

__version__ = "0.1.0"
