"""docs/deployment.md, deploy/compose.yaml and deploy/langgraph.json agree with each other and with the
code: every environment variable the compose file sets is one the server or Reins reads and the guide
explains, every graph and embedder path exists, and every service the guide names is in the file."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
GUIDE = (ROOT / "docs" / "deployment.md").read_text(encoding="utf-8")
COMPOSE = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text(encoding="utf-8"))
DEPLOYED = json.loads((ROOT / "deploy" / "langgraph.json").read_text(encoding="utf-8"))
SERVICE = "reins"


def _server_config_source() -> str:
    """The server's settings and LangGraph's checkpoint serialiser (dev dependencies)."""
    texts = []
    for name in ("langgraph_api.config", "langgraph.checkpoint.serde._msgpack"):
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin, name
        texts.append(Path(spec.origin).read_text(encoding="utf-8"))
    return "\n".join(texts)


def _reins_sources() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for folder in ("runtime", "cli") for p in (ROOT / folder).rglob("*.py"))


# Read by langgraph-runtime-pg (the open runtime of `make test-scale`, not installed in the main
# environment): the scale check's own server environment sets them, so they are exercised there.
RUNTIME_PG_NAMES = {"LG_BG_JOB_HEARTBEAT", "LG_RUNTIME_PG_AUTO_MIGRATE"}


def test_every_variable_the_compose_file_sets_is_read_somewhere_and_explained_in_the_guide():
    environment = COMPOSE["services"][SERVICE]["environment"]
    server, reins = _server_config_source(), _reins_sources()
    scale_check = (ROOT / "deploy" / "scale" / "cluster.py").read_text(encoding="utf-8")
    for name in environment:
        if name in RUNTIME_PG_NAMES:
            assert f'"{name}"' in scale_check, f"{name}: not set by the scale check's servers"
        elif name.startswith("REINS_"):
            assert f'"{name}"' in reins, f"{name}: no Reins module reads it"
        else:
            assert re.search(rf'["\']{name}["\']', server), f"{name}: langgraph-api does not read it"
        assert f"`{name}`" in GUIDE, f"{name}: not explained in docs/deployment.md"
    for name in ("DATABASE_URI", "REDIS_URI", "BG_JOB_ISOLATED_LOOPS", "LG_BG_JOB_HEARTBEAT", "BG_JOB_MAX_RETRIES"):
        assert name in environment, f"{name}: the guide's essentials must be in the compose file"


def test_the_compose_file_has_postgres_with_pgvector_redis_and_health_checks():
    services = COMPOSE["services"]
    assert "pgvector" in services["reins-postgres"]["image"] and services["reins-redis"]["image"].startswith("redis")
    for name, service in services.items():
        assert service.get("healthcheck", {}).get("test"), f"{name}: no health check"
    depends = services[SERVICE]["depends_on"]
    assert {d: c["condition"] for d, c in depends.items()} == {"reins-postgres": "service_healthy",
                                                               "reins-redis": "service_healthy"}
    uri = services[SERVICE]["environment"]["DATABASE_URI"]
    assert "@reins-postgres:5432/" in uri and "redis://reins-redis:6379" in services[SERVICE]["environment"]["REDIS_URI"]
    assert "/ok" in " ".join(services[SERVICE]["healthcheck"]["test"]) and "`GET /ok`" in GUIDE


def test_the_guides_commands_name_files_and_services_that_exist():
    for path in re.findall(r"(deploy/[\w./-]+\.(?:json|yaml|lock))", GUIDE):
        assert (ROOT / path).is_file(), f"the guide names {path}, which does not exist"
    for service in re.findall(r"--scale (\S+)=", GUIDE):
        assert service in COMPOSE["services"], f"--scale {service}: no such service"
    assert "langgraph build -c deploy/langgraph.json" in GUIDE
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^test-scale:", makefile, re.M) and "make test-scale" in GUIDE
    assert "deploy" not in makefile.split("\ntest:")[1].split("\n\n")[0], "make test stays without the scale check"


def test_the_deployed_config_serves_the_projects_graphs_from_paths_that_exist():
    project = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))
    assert set(DEPLOYED["graphs"]) == set(project["graphs"])
    for graph_id, entry in DEPLOYED["graphs"].items():
        file, attribute = entry["path"].rsplit(":", 1)
        assert (ROOT / "deploy" / file).resolve() == (ROOT / project["graphs"][graph_id]["path"].split(":")[0]).resolve()
        assert re.search(rf"^{attribute} = ", (ROOT / "deploy" / file).read_text(encoding="utf-8"), re.M)
        assert f"`{graph_id}`" in GUIDE
    assert DEPLOYED["dependencies"] == [".."]


def test_the_store_index_embeds_with_the_offline_embedder_of_its_declared_size():
    from langchain_core.embeddings import Embeddings

    index = DEPLOYED["store"]["index"]
    file, attribute = index["embed"].rsplit(":", 1)
    module = (ROOT / "deploy" / file).resolve().relative_to(ROOT).with_suffix("")
    embedder = getattr(importlib.import_module(".".join(("reins", *module.parts))), attribute)
    assert isinstance(embedder, Embeddings)
    assert len(embedder.embed_query("deploy on Fridays")) == index["dims"]


@pytest.mark.parametrize("row", ["approval claims", "long-term memory", "MCP sessions", "`REINS_HOME`", "runs index",
                                 "bundled resources", "persona", "caches"])
def test_the_guide_says_where_each_piece_of_state_lives(row):
    table = GUIDE.split("## What lives where")[1].split("\n## ")[0]
    assert any(row.lower() in line.lower() for line in table.splitlines() if line.startswith("|")), row
