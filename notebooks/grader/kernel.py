"""The grader in the student's kernel: running the notebook, and the capture cells that save each step's values
for the grader's process (:mod:`grader.grading`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from plumbing.errors import Llama3Error
from plumbing.paths import local_kernel_config

#: Seconds a cell may run before it is interrupted (its step then fails): the series' slowest cell takes a few seconds.
TIMEOUT = 120
#: Where the capture cells write; set by :func:`grader.grading.grade` for the kernel.
CAPTURE_ENV = "LLAMA3_GRADE_CAPTURE"


def capture(grade_id: str, namespace: Mapping, expression: str) -> None:
    """Called in the student's kernel by the grader's capture cells: evaluate ``expression`` there and save
    its values (or the error) for the grader, in the folder ``$LLAMA3_GRADE_CAPTURE``."""
    import torch

    folder = Path(os.environ[CAPTURE_ENV])
    try:
        values = eval(expression, dict(namespace))  # noqa: S307 (the grader's own expression)
        tripwire = sys.modules.get("grader.tripwire")  # imported when a step was armed in this kernel
        if tripwire is not None:
            tripwire.check_intact(grade_id)  # the watch still in place after the step's cell and its capture?
        # Saving runs none of the student's code: the tripwires' profile function (grader.tripwire) is paused,
        # which would otherwise look at every call of the pickler (seconds for 01's 128,000 ranks).
        profile = sys.getprofile()
        sys.setprofile(None)
        try:
            torch.save(_detached(values), folder / f"{grade_id}.pt")
        finally:
            sys.setprofile(profile)
    except Exception as e:  # the student's state is what it is: report, never stop the run
        (folder / f"{grade_id}.error").write_text(f"{type(e).__name__}: {e}", encoding="utf-8")


def load_values(path):
    """A step's values as the capture saved them (:func:`torch.load`), reading only data: tensors, numbers, strings,
    bytes, lists, tuples, dicts, and tiktoken's ``Encoding`` (01's tokenizer, rebuilt from its ranks). A value that
    would run code when read (a learner's object with ``__reduce__``) is refused.

    Raises:
        Llama3Error: the file holds such a value.
    """
    import pickle

    import tiktoken
    import torch

    try:
        with torch.serialization.safe_globals([tiktoken.core.Encoding]):
            return torch.load(path, weights_only=True)
    except pickle.UnpicklingError as e:
        first = str(e).strip().splitlines()[-1][:200] if str(e).strip() else type(e).__name__
        raise Llama3Error(
            f"the step's values hold an object the grader does not read (only tensors, numbers, strings, lists, tuples and dicts): {first}"
        ) from None


def _detached(value):
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, dict):
        return {k: _detached(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_detached(v) for v in value)
    return value


def _error_of(cell) -> tuple[str, str] | None:
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            return out.get("ename", ""), out.get("evalue", "")
    return None


def execute(nb, folder: Path, capture_dir: Path, timeout: int = TIMEOUT) -> str:
    """Run ``nb`` in a fresh kernel started in ``folder``, every cell even after an error; a cell that runs longer
    than ``timeout`` seconds is interrupted (its output is the interruption) and the run goes on. Returns ``""``,
    or why the run stopped early (the kernel died)."""
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    drop = ("LLAMA3_PROMPT", "LLAMA3_EXPORT_DIR")  # the default prompt, nothing written; LLAMA3_DIR stays
    env = {**{k: v for k, v in os.environ.items() if k not in drop}, CAPTURE_ENV: str(capture_dir), "MPLBACKEND": "agg"}
    with local_kernel_config("llama3-grade-kernel-") as config:
        client = NotebookClient(
            nb,
            config=config,
            timeout=timeout,
            kernel_name="python3",
            allow_errors=True,
            interrupt_on_timeout=True,
            record_timing=False,
            resources={"metadata": {"path": str(folder)}},
        )
        try:
            client.execute(env=env)
        except DeadKernelError as e:  # out of memory, os._exit(), ...
            return f"the kernel died ({str(e).splitlines()[0] if str(e) else 'no message'})"
    return ""
