# The README's two commands: `make videos` and `make test`. Both set up what
# is missing (system packages with apt-get, then .venv) and are quick when
# everything is already there.

PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed
QUALITY ?= h
JOBS ?= 2
# pycairo and manimpango build from source on Linux; fonts-noto-cjk gives
# the Chinese glyphs; espeak-ng speaks the offline narration.
SYSTEM_PACKAGES := build-essential pkg-config libcairo2-dev libpango1.0-dev fonts-noto-cjk espeak-ng
# The tests also play the embed kit in Debian's Chromium (driven by Playwright).
TEST_PACKAGES := $(SYSTEM_PACKAGES) chromium

.PHONY: videos test system system-test

videos: system $(STAMP)
	$(VENV)/bin/lecture build -q $(QUALITY) -j $(JOBS)

test: system-test $(STAMP)
	$(VENV)/bin/ruff check .
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

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[test]'
	touch $(STAMP)
