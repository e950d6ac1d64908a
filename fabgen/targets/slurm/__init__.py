"""Slurm: ``slurm/topology.conf`` for the topology/tree plugin."""
