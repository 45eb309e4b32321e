"""Run a notebook's code cells in this process, in IPython's shell, for tests that only read its export.

A Jupyter kernel costs 3 to 5 seconds a run before the first cell (starting, importing torch); the tests run the
notebooks about a hundred times on other prompts and checkpoints. Here the cells run top to bottom in
``IPython.core.interactiveshell.InteractiveShell``, its namespace cleared before each run, with ``notebooks/`` as
the working directory and the given environment, as in Jupyter; the exports are the same bytes (tests/notebooks/test_reproducibility.py
compares a run each way). The committed notebooks themselves are still run in kernels, by nbval
(tests/notebooks/test_reproducibility.py, ``make test``).
"""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import nbformat
import torch
from IPython.core.interactiveshell import InteractiveShell

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"


class CellError(AssertionError):
    """A cell raised: the message names the notebook, the cell and the error."""


@contextlib.contextmanager
def _isolated(env: dict[str, str]):
    """This process's environment replaced by ``env``, the working directory ``notebooks/``; torch's random state,
    print options and matplotlib's figures as they were afterwards."""
    import matplotlib.pyplot as plt

    saved_env, saved_cwd, rng = dict(os.environ), os.getcwd(), torch.get_rng_state()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(NOTEBOOK_DIR)
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        torch.set_rng_state(rng)
        torch.set_printoptions(profile="default")
        plt.close("all")


def run(path: Path, env: dict[str, str]) -> str:
    """Run every code cell of the notebook at ``path`` with environment ``env``; return what the cells printed.

    Raises:
        CellError: a cell raised (the first one stops the run, as in Jupyter's "Run All").
    """
    shell = InteractiveShell.instance()
    nb = nbformat.read(path, as_version=4)
    printed = io.StringIO()
    with _isolated(env), contextlib.redirect_stdout(printed):
        shell.reset(new_session=False)
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            result = shell.run_cell(cell.source, store_history=False)
            if not result.success:
                error = result.error_in_exec or result.error_before_exec
                raise CellError(f"{path.name}, cell {index} ({cell.get('id', '?')}): {type(error).__name__}: {error}")
        shell.reset(new_session=False)
    return printed.getvalue()
