"""A stand-in model mixin that records which model API served each call (sync or async).

Under ``ainvoke`` every model call of an async-native graph arrives through ``_agenerate``; a node
that LangGraph had to run in a worker thread would call the sync API instead.
"""

from __future__ import annotations

from typing import Any

from reins.runtime.standins.offline import OfflineModel
from reins.runtime.standins.scripted import ScriptedModel


class ApiRecorder:
    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        object.__setattr__(self, "apis", [])

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.apis.append("sync")
        return super()._generate(messages, stop, run_manager, **kwargs)

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):
        self.apis.append("async")
        return await super()._agenerate(messages, stop, run_manager, **kwargs)


class RecordingOfflineModel(ApiRecorder, OfflineModel):
    pass


class RecordingScriptedModel(ApiRecorder, ScriptedModel):
    pass
