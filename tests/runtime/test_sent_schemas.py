"""Every schema Reins sends a provider — each contract's response format (or its tool, under
function_calling) and every tool's parameters — compiles on llama.cpp's grammar builder: no
repetition of 2000 or more (string ``maxLength`` included). The strict schemas keep their bounds."""

from __future__ import annotations

import pytest

from reins.policies.models.provider_schema import repetition_overruns
from reins.runtime.contracts.roles import CONTRACT_ROLES
from reins.runtime.llm.model_calls import _json_schema, sent_schema, sent_tool
from reins.runtime.tools.toolbox import default_registry
from reins.schemas.assistant import AssistantAnswer
from tests.runtime.test_offline_responder_schemas import BUILT_IN, SCHEMAS

STRUCTURED = sorted((name, schema) for name, schema in SCHEMAS.items() if not isinstance(schema, str))


def test_the_table_names_every_built_in_contract():
    assert sorted(SCHEMAS) == BUILT_IN
    assert set(BUILT_IN) <= set(CONTRACT_ROLES)


@pytest.mark.parametrize(("contract", "schema"), STRUCTURED, ids=[name for name, _ in STRUCTURED])
def test_every_contract_schema_sent_compiles(contract, schema):
    assert repetition_overruns(sent_schema(schema)) == []
    strict = _json_schema(schema)
    assert sent_schema(schema) is not strict and set(sent_schema(schema)["properties"]) == set(strict["properties"])


def test_the_strict_schema_keeps_its_bounds():
    # the chat answer's summary: 2000 characters, checked locally, not sent (llama.cpp refused it)
    assert "$.summary.maxLength=2000" in repetition_overruns(_json_schema(AssistantAnswer))
    assert "maxLength" not in sent_schema(AssistantAnswer)["properties"]["summary"]
    assert any(repetition_overruns(_json_schema(schema)) for _, schema in STRUCTURED)


def test_every_tool_sent_compiles():
    registry = default_registry()
    tools = [tool for scope in sorted(registry.scopes()) for tool in registry.for_scope(scope).langchain_tools()]
    assert len(tools) >= 8
    for tool in tools:
        sent = sent_tool(tool)
        assert sent["function"]["name"] == tool.name
        assert repetition_overruns(sent["function"]["parameters"]) == [], tool.name


def test_doctor_probes_every_structured_contract_with_its_schema():
    from reins.runtime.llm.probe import PROBED_SCHEMAS

    assert all(dict(STRUCTURED)[name] is schema for name, schema in PROBED_SCHEMAS.items())
    # revisions send the plan's and the tasks' schemas again: nothing of their own to probe
    assert {name for name, _ in STRUCTURED} - set(PROBED_SCHEMAS) == {"delivery.plan_revision",
                                                                     "delivery.task_revision"}
