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

.PHONY: setup demo test bench eval studio clean

setup: $(VENV)/.synced

.tools/bin/uv:
	$(PYTHON) -m venv .tools
	.tools/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

$(VENV)/.synced: pyproject.toml uv.lock | $(UV)
	$(UV) sync --frozen --python $(PYTHON)
	@touch $@

demo: setup
	$(RUN)/reins doctor

test: setup
	$(RUN)/python -m pytest

clean:
	rm -rf $(VENV) .tools .reins
