"""Configuration: settings from the environment, the process's secrets, paths, tracing, the
per-run context and the user's persona."""
