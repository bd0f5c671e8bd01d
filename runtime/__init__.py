"""Reins runtime, one package per concept: config, llm (models and their calls), standins, contracts,
tools, persistence and execution; resources reads the bundled and the user's files."""

from reins.runtime.config import secrets as _secrets  # noqa: F401  every process redacts its secret values from the start
