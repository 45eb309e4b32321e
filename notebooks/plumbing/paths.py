"""Where things are: the repository, the stand-in's folder, the notebooks of the series, a kernel's sockets; atomic
writes."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
STANDIN_DIR = REPO_ROOT / "data" / "standin"
#: The file that marks a folder as the synthetic stand-in (written last by the build).
STANDIN_MARKER = "STANDIN.json"


def series_notebooks() -> list[Path]:
    """The notebooks of the series, in order: every ``notebooks/NN_*.ipynb``.

    This glob is the one list of notebooks: the Makefile, the runner, the tests, the site, the
    benchmark and the diagrams all read it, so a new notebook needs no edit anywhere else.
    """
    return sorted((REPO_ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def display_path(path: str | os.PathLike) -> str:
    """A path for messages: relative to the repository when inside it, else as given (never the user's home)."""
    path = Path(path)
    try:
        return str(path.resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def atomic_write(path: Path, write: Callable[[Path], object], mode: int = 0o644) -> None:
    """Call ``write(tmp)`` on a temporary file beside ``path``, fsync it, then rename it to ``path``.

    An interrupted write leaves no partial ``path`` (only a hidden ``.name.*.tmp`` that the stand-in
    build removes the next time).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        os.chmod(tmp, mode)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


@contextmanager
def local_kernel_config(prefix: str = "llama3-kernel-") -> Iterator:
    """A traitlets ``Config`` for nbclient: the kernel talks over IPC sockets in a private temporary folder, so nothing
    listens on the network and ipykernel does not warn about unencrypted TCP."""
    from traitlets.config import Config

    with tempfile.TemporaryDirectory(prefix=prefix) as sockets:
        yield Config({"KernelManager": {"transport": "ipc", "ip": os.path.join(sockets, "kernel")}})
