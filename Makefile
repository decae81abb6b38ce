# Two commands do all set-up on a fresh machine:
#   make lab   - create .venv from pinned versions and open the course in JupyterLab
#   make test  - create .venv if it is missing and run the whole test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PORT   ?= 8888
# Jupyter refuses to run as root unless told; containers and CI machines often are root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: setup lab test release check-release clean

setup: $(STAMP)

# Rebuilt whenever the pins or the package list change.
$(STAMP): constraints.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev]'
	$(BIN)/jupyter server extension enable --sys-prefix nbgrader.server_extensions.formgrader
	$(BIN)/jupyter server extension enable --sys-prefix nbgrader.server_extensions.assignment_list
	$(BIN)/jupyter server extension enable --sys-prefix nbgrader.server_extensions.validate_assignment
	$(BIN)/jupyter server extension enable --sys-prefix nbgrader.server_extensions.course_list
	$(BIN)/jupyter labextension enable --level=sys_prefix @jupyter/nbgrader
	$(BIN)/jupyter labextension enable --level=sys_prefix @jupyter-widgets/jupyterlab-manager
	touch $(STAMP)

# The venv's scripts go on PATH: formgrader runs `alembic` from PATH to create the
# gradebook.
# LAB_DIR and LAB_ARGS let tests/test_browser.py run this very recipe on a copy of the course.
LAB_DIR  ?= $(CURDIR)
LAB_ARGS ?=
lab: setup
	cd "$(LAB_DIR)" && PATH="$(abspath $(BIN)):$$PATH" "$(abspath $(BIN))/jupyter" lab $(ROOT_FLAG) \
		--ServerApp.root_dir="$(LAB_DIR)" --ServerApp.port=$(PORT) \
		--LabApp.default_url=/lab/tree/notebooks $(LAB_ARGS)

test: setup
	$(BIN)/python -m pytest -n 2 --dist loadfile --durations=25

release: setup
	$(BIN)/python -m grader release

check-release: setup
	$(BIN)/python -m grader release --check

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
