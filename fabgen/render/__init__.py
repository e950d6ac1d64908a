"""Render targets: templates, target registry and the checks run on what they produce."""
