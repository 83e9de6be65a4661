# Two commands set everything up on a fresh machine with python3 and make:
#   make run    create .venv, install, and do the main job
#   make test   create .venv if missing, install, and run the whole suite
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run fly test lint typecheck clean bench

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(PY) manage.py demo

fly: $(STAMP)
	@mkdir -p var/journals
	$(PY) -m runtime fly --team repo-fix --scenario first-flight --journal var/journals/first-flight-$$(date +%Y%m%d-%H%M%S).jsonl

test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy runtime journal_store config tasks dashboard desk
	$(PY) -m pytest

lint: $(STAMP)
	$(PY) -m ruff check .

typecheck: $(STAMP)
	$(PY) -m mypy runtime journal_store config tasks dashboard desk

bench: $(STAMP)
	$(PY) bench/loop_overhead.py
	$(PY) bench/team_flight.py
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) bench/store.py
	$(PY) bench/workers.py

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache
