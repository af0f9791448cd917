# The README's two commands: `make videos` and `make test`. Both set up what
# is missing (system packages with apt-get, then .venv) and are quick when
# everything is already there.

PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed
TOOLS := $(VENV)/.tools
# The whole Python stack, pinned with hashes (`make lock` writes both): the project's packages with
# their test and cluster extras, and the tools the venv is built with (pip, the sdists' build backends, uv).
LOCK := requirements.lock
BUILD_LOCK := requirements-build.lock
# The oldest Python the project supports: the lock holds one version of each package for every Python.
LOCK_PYTHON := 3.11
QUALITY ?= h
JOBS ?= 2
# pycairo and manimpango build from source on Linux; fonts-noto-cjk gives
# the Chinese glyphs; espeak-ng speaks the offline narration.
SYSTEM_PACKAGES := build-essential pkg-config libcairo2-dev libpango1.0-dev fonts-noto-cjk espeak-ng
# The tests also play the embed kit in Debian's Chromium (driven by Playwright).
TEST_PACKAGES := $(SYSTEM_PACKAGES) chromium

.PHONY: videos test lock system system-test

videos: system $(STAMP)
	$(VENV)/bin/lecture build -q $(QUALITY) -j $(JOBS)

test: system-test $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/pytest

system:
	@$(call install,$(SYSTEM_PACKAGES))

system-test:
	@$(call install,$(TEST_PACKAGES))

# Install the missing packages of $(1) with apt-get as root, or print the line.
define install
missing=""; \
for pkg in $(1); do \
  dpkg-query -W -f='$${Status}' $$pkg 2>/dev/null | grep -q "ok installed" || missing="$$missing $$pkg"; \
done; \
$(PYTHON) -c 'import ensurepip' 2>/dev/null || missing="$$missing python3-venv"; \
$(PYTHON) -c 'import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
  || missing="$$missing python3-dev"; \
if [ -n "$$missing" ]; then \
  if [ "$$(id -u)" = 0 ]; then \
    echo "installing system packages:$$missing"; \
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
  else \
    echo "Missing system packages. Install them with:"; \
    echo "  sudo apt-get install -y$$missing"; \
    exit 1; \
  fi; \
fi
endef

# A new .venv whenever a lock or pyproject.toml changes, so it holds exactly what the locks name. Every
# file is checked against its hash; pycairo, ManimPango, jieba and srt come as sources and build on the
# locked tools (no build isolation, which would fetch unpinned ones). The backends find those tools
# (meson, ninja, cython) on PATH, so the venv's bin comes first, as if it were activated.
IN_VENV := PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/python -m
define new_venv
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --require-hashes -r $(BUILD_LOCK)
endef

$(TOOLS): $(BUILD_LOCK)
	$(new_venv)
	touch $@

$(STAMP): $(LOCK) $(BUILD_LOCK) pyproject.toml
	$(new_venv)
	$(IN_VENV) pip install --quiet --require-hashes --no-build-isolation -r $(LOCK)
	$(IN_VENV) pip install --quiet --no-deps --no-build-isolation -e .
	touch $(TOOLS) $@

# Refresh both locks from pyproject.toml: versions already locked are kept where the ranges still allow
# them (`make lock UPGRADE=--upgrade` takes the newest instead). The tools come first; then uv resolves
# the project twice: for LOCK_PYTHON alone, then for every Python held to those versions (and to the
# tools'), so a newer Python gets the same numpy and manim rather than a fork of its own.
UV := $(VENV)/bin/uv pip compile --quiet --python-version $(LOCK_PYTHON)
PINS := $(VENV)/lock-pins.txt
LOCKED := --universal --generate-hashes --custom-compile-command "make lock"
lock: $(TOOLS)
	$(UV) --group build $(LOCKED) $(UPGRADE) -o $(BUILD_LOCK)
	{ [ ! -f $(LOCK) ] || cp $(LOCK) $(PINS); } && \
	$(UV) pyproject.toml --all-extras -c $(BUILD_LOCK) --no-header --no-annotate $(UPGRADE) -o $(PINS) && \
	$(UV) pyproject.toml --all-extras -c $(BUILD_LOCK) -c $(PINS) $(LOCKED) -o $(LOCK)
