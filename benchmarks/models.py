"""Benchmark recipes and jobs (the GPU benchmark issue fills this app)."""
