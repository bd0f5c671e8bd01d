"""The docs' per-provider settings (docs/models.md) are the ones tested: each family's block drives a pass run.

The settings are read from the ``<!-- providers -->`` block of docs/models.md; the endpoint, key and
model name are swapped for the loopback stub, everything else (structured method, tool choice) is
used as written, and the request shapes are asserted against it.
"""

from __future__ import annotations

import re
import shlex

import pytest

from reins.graphs.delivery_chain import build_graph
from reins.runtime.config.paths import PROJECT_ROOT
from tests.wire.behaviours import cooperative, schema_name, tool_names
from tests.wire.conftest import wire_models

FAMILIES = ("OpenAI", "DeepSeek", "vLLM", "Ollama", "llama.cpp server")
SWAPPED = {"OPENAI_BASE_URL", "OPENAI_API_KEY", "REINS_MODEL"}


def readme_settings() -> dict[str, dict[str, str]]:
    text = (PROJECT_ROOT / "docs" / "models.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- providers -->\n```bash\n(.*?)```\n<!-- /providers -->", text, re.S)
    assert block, "docs/models.md has no <!-- providers --> block"
    families: dict[str, dict[str, str]] = {}
    current = None
    for line in block.group(1).splitlines():
        if line.startswith("# "):
            current = line[2:].split(" (")[0].strip()
            families[current] = {}
        elif line.startswith("export ") and current:
            for word in shlex.split(line.removeprefix("export ")):
                name, _, value = word.partition("=")
                families[current][name] = value
    return families


def test_readme_lists_every_provider_family_with_a_model():
    settings = readme_settings()
    assert tuple(settings) == FAMILIES
    assert all(values.get("REINS_MODEL") for values in settings.values())


@pytest.mark.parametrize("family", FAMILIES)
def test_each_documented_provider_setting_passes_a_delivery_run(stub, family):
    wanted = {k: v for k, v in readme_settings()[family].items() if k not in SWAPPED}
    provider = stub(cooperative)

    out = build_graph(models=wire_models(provider.base_url, **wanted)).invoke(
        {"requirement_uri": "demo://scenarios/request-limit-banner/requirement.md"}
    )

    assert out["run_status"] == "pass"
    bodies = provider.bodies()
    assert len(bodies) == 10
    method = wanted.get("REINS_STRUCTURED_METHOD", "json_schema")
    structured = [b for b in bodies if schema_name(b)]
    assert len(structured) == 7
    if method == "json_schema":
        assert all(b["response_format"]["type"] == "json_schema" for b in structured)
    else:
        assert all("response_format" not in b and b["tool_choice"] == "required" for b in structured)
    managers = [b for b in bodies if any(n.endswith("-subagent") for n in tool_names(b))]
    assert [b["parallel_tool_calls"] for b in managers] == [False, False, True]
    assert all(isinstance(b["tool_choice"], str) for b in managers) or wanted.get("REINS_TOOL_CHOICE") == "named"
