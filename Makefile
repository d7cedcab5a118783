# Two commands set everything up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-e2e test-probe lint bench clean sanitize release-tag docs

$(STAMP): pyproject.toml csrc/native.c csrc/reword.c csrc/reword_pass.h csrc/html_entities.h
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	bash examples/demo.sh

# The fast loop: every test but the end-to-end ones (marker e2e, listed in tests/conftest.py), one
# pytest worker per core (pytest-xdist); then ruff and mypy.
test: $(STAMP)
	$(BIN)/python -m pytest -n auto --dist loadgroup -m "not e2e"
	$(BIN)/ruff check contam_guard tests benchmarks
	$(BIN)/mypy

# The end-to-end tests: the real pre-commit, git-lfs and Chromium, wheels built, Spark's JVMs (kept
# on one worker by tests/conftest.py), and a hook environment installed from the registry (network).
# .ci/run runs them after `make test`.
test-e2e: $(STAMP)
	$(BIN)/python -m pytest -n auto --dist loadgroup -m e2e

# The docs site (mkdocs + Material) into site/: --strict turns every warning (a broken link or
# anchor, a page missing from the nav) into a failure. docs/_hooks/reference.py generates the
# reference pages from the code as it builds. tests/docs checks the result (links, Chromium).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 PYTHONPATH=$(CURDIR) $(BIN)/mkdocs build --strict --site-dir site

# The probe's tests with the [probe] extra installed: the transformers backend and a tiny GPT-2
# trained inside a test (tests/probe; without the extra they skip with a reason). The CPU build of
# torch, pinned, goes first: the extra's range would otherwise fetch a CUDA build.
test-probe: $(STAMP)
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev,probe]'
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/probe

lint: $(STAMP)
	$(BIN)/ruff check contam_guard tests benchmarks
	$(BIN)/mypy

# The extension built with AddressSanitizer and UndefinedBehaviorSanitizer into build/sanitize
# (beside a copy of the package, so the normal build is untouched), then the text, engine and
# reader tests run against it: any read or write out of bounds, or undefined behaviour, aborts
# the run. Python itself is not built with ASan, so its runtime is preloaded, with libstdc++ (ASan
# must find the real __cxa_throw at start-up, or pyarrow's C++ exceptions abort).
SAN      := $(CURDIR)/build/sanitize
SAN_CC   := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g
SAN_ENV  := PYTHONPATH=$(SAN) LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libstdc++.so)" \
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

sanitize: $(STAMP)
	rm -rf $(SAN) && mkdir -p $(SAN)/tmp
	cp -r contam_guard $(SAN)/ && find $(SAN)/contam_guard \( -name '*.so' -o -name __pycache__ \) -prune -exec rm -rf {} +
	CC=gcc CFLAGS="$(SAN_CC)" LDFLAGS="$(SAN_CC)" $(BIN)/python -c "from setuptools import setup; setup()" \
		--quiet build_ext --build-lib $(SAN) --build-temp $(SAN)/tmp 2>&1 | grep -v -i 'warning\|experimental\|config =\|^ *$$' || true
	$(SAN_ENV) $(BIN)/python -P -c "import contam_guard._native as m; assert m.__file__.startswith('$(SAN)/'), m.__file__"
	$(SAN_ENV) $(BIN)/python -P -m pytest -p no:cacheprovider -o pythonpath="$(SAN) ." -q tests/text tests/engine tests/readers

bench: $(STAMP)
	$(BIN)/python -m benchmarks.run $(BENCH_ARGS)
	$(BIN)/python -m benchmarks.search
	$(BIN)/python -m benchmarks.startup

# Tag the version pyproject.toml names (v0.1.0) on the commit checked out, for the pre-commit
# example's `rev:` and `pip install "git+...@v0.1.0"` (.ci/release-tag says what it checks first).
# Then publish it: git push origin v0.1.0
release-tag:
	PATH="$(CURDIR)/$(BIN):$$PATH" bash .ci/release-tag

clean:
	rm -rf $(VENV) build site *.egg-info
