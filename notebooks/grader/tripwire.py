"""The grader's tripwires: while a student's notebook runs, record every call that a graded cell's solution lines
make, directly or through functions they call, of a function the step is to write by hand (``F.silu`` however it
was bound: an alias, ``getattr``, ``nn.SiLU``), or of Meta's or Hugging Face's code, or of ``plumbing.reference``.

Runs in the student's kernel: :func:`arm` (called by a cell the grader inserts before each graded cell) registers
the cell's code by the file name IPython compiles it under, and a profile function (``sys.setprofile``) looks at
each call of a library function with a forbidden name and each call into a forbidden module; when one of the
frames that led to it lies in a graded cell's solution lines, the step's ``GRADE_ID.shortcut`` file in the
capture folder gets a line. :mod:`grader.grading` reads those files.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

#: a graded cell's code file -> (grade_id, first solution line, last solution line, forbidden names), lines from 1
_CELLS: dict[str, tuple[str, int, int, frozenset]] = {}
#: every forbidden name of the armed cells
_NAMES: set[str] = set()
#: the code file of the cell armed last
_ARMED: str | None = None
#: a code file -> 0 (not looked at), 1 (a library whose functions are matched by name), or the forbidden module's name
_KIND: dict[str, object] = {}
_SEEN: set[tuple[str, str]] = set()


def _folders() -> tuple[tuple[str, ...], dict[str, str]]:
    """The libraries matched by name (torch, tiktoken, the package plumbing) and the forbidden modules' folders or files."""
    import importlib.util

    def where(module: str) -> str | None:
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.origin:
            return None
        return str(Path(spec.origin).parent) + os.sep if spec.submodule_search_locations else spec.origin

    here = where("plumbing")  # the series' package: matched by name, as torch is; its reference.py is Meta's code
    libraries = tuple(f for f in (where("torch"), where("tiktoken"), here) if f)
    forbidden = {
        f: name
        for name, f in (
            ("Meta's reference code (llama_models)", where("llama_models")),
            ("Hugging Face's transformers", where("transformers")),
            ("plumbing.reference (Meta's code)", here and here + "reference.py"),
        )
        if f
    }
    return libraries, forbidden


_LIBRARIES: tuple[str, ...] = ()
_FORBIDDEN: dict[str, str] = {}


def _kind(filename: str):
    for prefix, name in _FORBIDDEN.items():
        if filename.startswith(prefix):
            return name
    return 1 if filename.startswith(_LIBRARIES) else 0


def _library_builtin(f) -> bool:
    """Whether a builtin (a ``c_call``) belongs to torch or tiktoken: ``str.encode`` does not."""
    owner = getattr(f, "__self__", None)
    module = getattr(f, "__module__", None) or (
        getattr(owner, "__name__", "") if isinstance(owner, type(sys)) else type(owner).__module__ if owner is not None else ""
    )
    return (module or "").startswith(("torch", "tiktoken"))


def _record(grade_id: str, what: str) -> None:
    """One line in the step's ``GRADE_ID.shortcut`` file, once."""
    if (grade_id, what) not in _SEEN:
        _SEEN.add((grade_id, what))
        folder = Path(os.environ["LLAMA3_GRADE_CAPTURE"])
        with open(folder / f"{grade_id}.shortcut", "a", encoding="utf-8") as f:
            f.write(what + "\n")


def _blame(frame, what: str, name: str | None) -> None:
    while frame is not None:
        cell = _CELLS.get(frame.f_code.co_filename)
        if cell is not None and cell[1] <= frame.f_lineno <= cell[2] and (name is None or name in cell[3]):
            _record(cell[0], what)
            return
        frame = frame.f_back
    # No graded cell on this thread's stack: a thread a graded cell started (its frames are not the cell's); the
    # step armed last is the one running, or the one whose cell started it.
    if _ARMED is not None and threading.current_thread() is not threading.main_thread():
        cell = _CELLS[_ARMED]
        if name is None or name in cell[3]:
            _record(cell[0], f"{what}, in a thread")


def check_intact(grade_id: str) -> None:
    """Called after a step's cell and its capture: the step took a shortcut when the tripwires' profile function is
    no longer in place (``sys.setprofile`` or ``threading.setprofile`` called, however it was bound)."""
    if _ARMED is not None and (sys.getprofile() is not _profile or threading.getprofile() is not _profile):
        _record(grade_id, "switched off the grader's watch (sys.setprofile)")
        sys.setprofile(_profile)
        threading.setprofile(_profile)


def _profile(frame, event, arg):
    if event == "call":
        code = frame.f_code
        kind = _KIND.get(code.co_filename)
        if kind is None:
            kind = _KIND[code.co_filename] = _kind(code.co_filename)
        if kind == 0:
            return
        if kind == 1:
            if code.co_name in _NAMES:
                _blame(frame.f_back, f"calls {code.co_name} (however it is named in the cell)", code.co_name)
            return
        _blame(frame.f_back, f"uses {kind}", None)
    elif event == "c_call":
        name = getattr(arg, "__name__", None)
        if name in _NAMES and _library_builtin(arg):
            _blame(frame, f"calls {name} (however it is named in the cell)", name)


def arm(grade_id: str, source: str, first: int, last: int, names) -> None:
    """Watch the graded cell ``source`` (about to run) of step ``grade_id``: its lines ``first`` to ``last``
    (from 1) are the solution, ``names`` the functions it may not call."""
    global _LIBRARIES, _FORBIDDEN, _ARMED
    from IPython import get_ipython

    if not _LIBRARIES:
        _LIBRARIES, _FORBIDDEN = _folders()
    filename = get_ipython().compile.get_code_name(source, source, 0)
    _CELLS[filename] = (grade_id, first, last, frozenset(names))
    _ARMED = filename
    _NAMES.update(names)
    sys.setprofile(_profile)
    threading.setprofile(_profile)  # and the threads the cell starts
