"""What ``reins doctor`` and a model set call the model serving a role, from the settings alone
(no client is built, so showing the configuration loads no provider library)."""

from __future__ import annotations

from runtime.settings import Settings

OFFLINE_LABEL = "offline (rule-based stand-in)"


def model_label(settings: Settings, role: str) -> str:
    name = settings.model_for(role)
    return f"openai-compatible:{name}" if name else OFFLINE_LABEL
