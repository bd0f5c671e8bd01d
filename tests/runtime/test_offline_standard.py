"""OfflineModel passes LangChain's standard chat-model unit tests."""

from __future__ import annotations

from langchain_tests.unit_tests import ChatModelUnitTests

from reins.runtime.standins.offline import OfflineModel


class TestOfflineModelStandard(ChatModelUnitTests):
    @property
    def chat_model_class(self) -> type[OfflineModel]:
        return OfflineModel

    @property
    def chat_model_params(self) -> dict:
        return {"model": "reins-offline"}

    @property
    def init_from_env_params(self) -> tuple[dict, dict, dict]:
        # The offline model must ignore provider configuration: even with a real model and a key in
        # the environment it stays the rule-based stand-in and holds no secret.
        return (
            {"REINS_MODEL": "gpt-4o-mini", "OPENAI_API_KEY": "sk-test-not-a-real-key"},
            {},
            {"model_name": "reins-offline"},
        )
