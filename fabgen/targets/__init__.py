"""One folder per consumer of fabgen's output: what it is sent, how it is checked, how it is read back.

Kept import-light: the spec stage imports leaf modules of these folders (a
consumer's limits) without pulling in the renderers.
"""
