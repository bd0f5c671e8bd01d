"""Reins runtime: models, contracts, checkpointers, resources and progress for the graphs."""

from runtime import secrets as _secrets  # noqa: F401  every process redacts its secret values from the start
