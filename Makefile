# Hermes Ops — `make run` serves the product, `make test` runs the whole suite.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip
HOST   ?= 127.0.0.1
PORT   ?= 8000
WORKERS ?= 2
# Threaded workers: a slow business tool call (SPEC §7, up to 20 s) holds one thread, not a worker.
THREADS ?= 4

.PHONY: run install install-dev migrate test lint bench bench-scale demo soak clean messages

# Installs say one line each and stay quiet unless something fails (-qq).
$(BIN)/python:
	@echo "Creating $(VENV) …"
	@$(PYTHON) -m venv $(VENV)
	@$(PIP) install -qq --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	@echo "Installing Hermes Ops and its dependencies (the first time takes a few minutes) …"
	@$(PIP) install -qq -e '.[server]'
	@touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	@echo "Installing Hermes Ops with the development tools (the first time takes a few minutes) …"
	@$(PIP) install -qq -e '.[dev]'
	@touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

migrate: install
	@$(BIN)/python manage.py migrate --no-input --verbosity 0

# The port is checked first (a clear line and no server when it is taken); the
# log-in box, with a new admin's one-time password, is the last thing said before serving.
run: install
	@$(BIN)/python manage.py check_port $(HOST) $(PORT)
	@echo "Migrating the database …"
	@$(BIN)/python manage.py migrate --no-input --verbosity 0
	@$(BIN)/python manage.py collectstatic --no-input --verbosity 0
	@$(BIN)/python manage.py ensure_admin
	@$(BIN)/gunicorn project.wsgi --bind $(HOST):$(PORT) --workers $(WORKERS) --threads $(THREADS) --access-logfile - --log-level warning \
		--graceful-timeout 5 --no-control-socket

# ruff first (lint and format, configured in pyproject.toml), then the whole suite on two processes.
PYTEST_ARGS ?= -n 2
test: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: install-dev
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: install-dev
	$(BIN)/python -m tests.bench.run

# 10,000 runs × 200 visits need PostgreSQL (DATABASE_URL); BENCH_SCALE_RUNS lowers the count.
bench-scale: install-dev
	@case "$$DATABASE_URL" in postgres*) ;; *) echo "bench-scale: DATABASE_URL is not PostgreSQL; the scale bench writes 50 runs only.";; esac
	$(BIN)/python -m tests.bench.run --scale

# The agent side end to end on a throw-away SQLite Hermes Ops: a real
# hermes-agent reads node A through the context tools, then a 429 ends as FAILED.
demo: install-dev
	$(BIN)/python -m demo

# The hardening suite, longer: 60 fuzz examples per operation and mode (CI: 6) and
# 10,000 random tokens per scheme (CI: 5,000). Prints its figures.
soak: install-dev
	HARDENING_FUZZ_EXAMPLES=$${HARDENING_FUZZ_EXAMPLES:-60} HARDENING_RANDOM_TOKENS=$${HARDENING_RANDOM_TOKENS:-10000} \
		$(BIN)/python -m pytest tests/hardening -q -s $(SOAK_ARGS)

# Refresh the Simplified Chinese catalogues from the source (each app's strings into its own
# locale/, templates/ into project/locale/), then compile them; the .mo files are committed.
messages: install-dev
	$(BIN)/python manage.py makemessages -l zh_Hans --no-location --no-obsolete \
		--ignore '.venv/*' --ignore 'tests/*' --ignore 'demo/*' --ignore 'var/*' --ignore 'build/*'
	$(BIN)/python manage.py compilemessages -l zh_Hans --ignore '.venv/*'

clean:
	rm -rf $(VENV) var/staticfiles test-output
