"""Execute notebooks of the series with nbclient, showing a progress bar per notebook.

    python -m tools.run_notebooks --out build notebooks/01_tokenization.ipynb ...
    python -m tools.run_notebooks --inplace notebooks/*.ipynb     # `make refresh`

Timings are not recorded, so that outputs stay reproducible. A failing cell stops the run with its error and exit
status 1 (130 on Ctrl-C); with ``--out``, the earlier copies of the notebooks not yet run are removed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import nbformat
import plumbing
from plumbing.paths import local_kernel_config
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbconvert.preprocessors import CoalesceStreamsPreprocessor
from tqdm.auto import tqdm

REPO_ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = REPO_ROOT / "notebooks"


def execute_notebook(
    src: Path,
    dest: Path | None = None,
    env: dict | None = None,
    progress: bool = True,
    timeout: int = 600,
    *,
    on_kernel_start: Callable[[int], object] | None = None,
    on_cell_start: Callable[..., object] | None = None,
    on_cell_executed: Callable[..., object] | None = None,
):
    """Run notebook ``src`` top to bottom in ``notebooks/`` and write the executed copy to ``dest`` (if given; may be ``src``).

    Args:
        env: environment for the kernel (default: this process's).
        timeout: seconds allowed per cell.
        on_kernel_start: called with the kernel's process id, before the first cell.
        on_cell_start, on_cell_executed: nbclient's hooks (keywords ``cell``, ``cell_index``), before every cell and
            after every non-empty code cell (benchmarks/run.py times each cell with them).

    Returns:
        The executed ``nbformat.NotebookNode``.

    Raises:
        nbclient.exceptions.CellExecutionError: a cell raised; the message holds its traceback.
    """
    nb = nbformat.read(src, as_version=4)
    n_code = sum(c.cell_type == "code" for c in nb.cells)
    bar = tqdm(total=n_code, desc=src.stem, unit="cell", disable=not progress, leave=True)

    def cell_executed(cell, **kwargs):
        if cell.cell_type == "code":
            bar.update(1)
        if on_cell_executed is not None:
            on_cell_executed(cell=cell, **kwargs)

    def notebook_start(**_):
        if on_kernel_start is not None:
            on_kernel_start(client.km.provisioner.process.pid)

    with local_kernel_config() as config:
        client = NotebookClient(
            nb,
            config=config,
            timeout=timeout,
            kernel_name="python3",
            record_timing=False,
            resources={"metadata": {"path": str(NOTEBOOK_DIR)}},
            on_cell_executed=cell_executed,
            on_notebook_start=notebook_start,
            on_cell_start=on_cell_start,
        )
        try:
            client.execute(env=dict(os.environ if env is None else env))
        finally:
            bar.close()
    # Printed text arrives in chunks whose split depends on timing: merge them, so a re-run gives the same file.
    nb, _ = CoalesceStreamsPreprocessor().preprocess(nb, {})
    # Keep only what a reader's Jupyter needs: no widget state, no interpreter version.
    nb.metadata.pop("widgets", None)
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["llama3"] = run_metadata(env)
    if dest is not None:
        plumbing.paths.atomic_write(dest, lambda tmp: nbformat.write(nb, tmp))
    return nb


def run_metadata(env: dict | None = None) -> dict:
    """What a run was made on, for the executed notebook's metadata ``llama3`` (the site reads it, not the printed text).

    ``weights``: ``"standin"``, ``"meta"`` or ``"hf"``; ``weights_description``: the line each notebook prints;
    ``prompt``; for a stand-in of another model's shapes, ``standin_model`` ("Llama 3.2 1B (16 layers)").
    """
    env = dict(os.environ if env is None else env)
    source = plumbing.find_weights(env.get("LLAMA3_DIR") or None)
    run = {
        "weights": "standin" if source.standin else source.format,
        "weights_description": source.description,
        # JSON is UTF-8: a prompt with undecodable bytes (lone surrogates) is stored with escapes.
        "prompt": env.get("LLAMA3_PROMPT", plumbing.DEFAULT_PROMPT).encode("utf-8", "backslashreplace").decode("utf-8"),
    }
    if source.standin and not plumbing.is_default_standin(source.folder):  # a stand-in of another model's shapes
        model, n_layers = plumbing.standin_model(source.folder)
        run["standin_model"] = model.replace("-", " ") + (f" ({n_layers} layers)" if n_layers is not None else "")
    return run


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--out", type=Path, help="folder for the executed copies")
    group.add_argument("--inplace", action="store_true", help="overwrite the notebooks with their executed versions")
    args = parser.parse_args(argv)
    interrupts = []  # Ctrl-C reaches nbclient's event loop, which may turn it into another error while it stops

    def on_interrupt(signum, frame):
        interrupts.append(signum)
        signal.default_int_handler(signum, frame)

    signal.signal(signal.SIGINT, on_interrupt)
    for i, nb_path in enumerate(args.notebooks):
        dest = nb_path if args.inplace else args.out / nb_path.name
        try:
            execute_notebook(nb_path.resolve(), dest)
        except (KeyboardInterrupt, asyncio.CancelledError, Exception) as e:  # a cell's error, Ctrl-C, a dead kernel
            interrupted = bool(interrupts) or any(isinstance(x, (KeyboardInterrupt, asyncio.CancelledError)) for x in chain(e))
            if isinstance(e, CellExecutionError):
                print(f"\n{failure_summary(nb_path, e)}", file=sys.stderr)
            elif interrupted:
                print(f"\ninterrupted while running {nb_path.name}", file=sys.stderr)
            else:
                print(f"\n{nb_path.name} stopped with an unexpected error: {type(e).__name__}: {e}", file=sys.stderr)
            if not args.inplace:  # never leave a mix of old and new results for `make html` to publish
                stale = [args.out / p.name for p in args.notebooks[i:] if (args.out / p.name).exists()]
                for path in stale:
                    path.unlink()
                if stale:
                    print(f"removed the earlier results of {', '.join(p.name for p in stale)} from {args.out}/", file=sys.stderr)
            return 130 if interrupted else 1
    return 0


def chain(error: BaseException) -> list[BaseException]:
    """``error`` and the exceptions it was raised from or while handling."""
    out = []
    while error is not None and error not in out:
        out.append(error)
        error = error.__cause__ or error.__context__
    return out


def failure_summary(nb_path: Path, error: CellExecutionError) -> str:
    """One clear message for input errors (the project's Llama3Error, a notebook's ValueError); the traceback otherwise."""
    where = f"{nb_path.name} stopped"
    if error.ename in ("Llama3Error", "ValueError"):
        return f"{where}: {error.ename}: {error.evalue}"
    return f"{where} with an unexpected error:\n{error}"


if __name__ == "__main__":
    sys.exit(main())
