# Two commands set everything up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-probe lint bench clean sanitize

$(STAMP): pyproject.toml csrc/native.c csrc/reword.c csrc/reword_pass.h csrc/html_entities.h
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	bash examples/demo.sh

# One pytest worker per core (pytest-xdist); tests/conftest.py keeps the Spark tests on one worker.
test: $(STAMP)
	$(BIN)/python -m pytest -n auto --dist loadgroup
	$(BIN)/ruff check contam_guard tests benchmarks
	$(BIN)/mypy

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

clean:
	rm -rf $(VENV) build *.egg-info
