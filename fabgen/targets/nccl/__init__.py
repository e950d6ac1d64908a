"""NCCL: the topology XML and its parser-faithful checker, nccl.conf / nccl.env, the variables NCCL knows."""
