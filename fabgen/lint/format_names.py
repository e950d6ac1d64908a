"""The names of the lint report formats, apart from their writers.

Why a module of its own: ``fabgen lint --format`` needs the names when the
command line is built, for every ``fabgen`` command; the writers
(:mod:`fabgen.lint.formats`) import the whole rule registry.
"""

FORMATS = ("text", "parsable", "json", "github", "sarif")
