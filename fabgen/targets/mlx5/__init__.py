"""mlx5 NICs: the per-host RoCE script and the per-profile firmware script."""
