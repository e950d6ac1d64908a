"""Arista EOS: the config model and its templates, the line grammar that checks it, the parser back."""
