"""Cumulus Linux NVUE: startup.yaml and nv set lines, the object-model check, the parser back."""
