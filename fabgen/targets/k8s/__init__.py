"""Kubernetes: node labels in Topograph's keys, for topology-aware schedulers."""
