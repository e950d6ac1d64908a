"""Arista AVD export: fabgen's part of each EOS switch as AVD structured config (opt-in target ``avd``)."""
