"""Write Gradescope's autograder bundle (``make gradescope OUT=DIR``).

    python -m tools.gradescope DIR          # writes DIR/gradescope-autograder.zip (DIR is created when missing)
    python -m tools.gradescope FILE.zip     # writes FILE.zip

What the zip holds (Gradescope's ``setup.sh`` and ``run_autograder``, the grader, the student edition; no solution):
docs/instructor.md, section 5.

Raises (one line, exit status 2): ``BundleError``: OUT is a file that is not a .zip, or a folder where the zip should
go; ``student.StudentError``: the student edition cannot be written.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import zipfile
from pathlib import Path

from tools import classroom_template
import plumbing
from tools import student

REPO_ROOT = Path(__file__).resolve().parent.parent
NAME = "gradescope-autograder.zip"
#: Every entry's time, so that the same sources give the same zip.
DATE = (1980, 1, 1, 0, 0, 0)

SETUP = """\
#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu): Python 3.11 or newer, the
# packages of requirements.lock (every one pinned; PyTorch's CPU-only build), the packages plumbing and grader, and the synthetic
# stand-in checkpoint (data/standin/, 2.1 GB) on which the grader checks every step.
set -euo pipefail
cd "$(dirname "$0")"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
PY=""
for candidate in python3.13 python3.12 python3.11 python3; do
    if command -v "$candidate" >/dev/null && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
        PY=$candidate; break
    fi
done
if [ -z "$PY" ]; then  # Ubuntu 22.04 and older ship Python 3.10 or older: Python 3.11 from the deadsnakes PPA
    apt-get install -y -qq software-properties-common
    add-apt-repository -y ppa:deadsnakes/ppa
    apt-get update -qq
    apt-get install -y -qq python3.11 python3.11-venv
    PY=python3.11
else  # venv's pip (ensurepip) is a package of its own on Ubuntu
    apt-get install -y -qq "$("$PY" -c 'import sys; print("python%d.%d-venv" % sys.version_info[:2])')" || true
fi
"$PY" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu .venv/bin/python -m pip install --progress-bar off -r requirements.lock
.venv/bin/python -m pip install --quiet --no-deps --editable .   # editable: the grader finds notebooks/ beside it
.venv/bin/python -m plumbing build-standin
"""

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Gradescope runs this for each submission: every notebook of the series in /autograder/submission/ (whatever its
# name) is run on the stand-in and graded step by step into /autograder/results/results.json, one test per step
# (python -m grader.gradescope). AUTOGRADER_ROOT=DIR runs it on DIR/source, DIR/submission, DIR/results instead.
set -uo pipefail
root="${AUTOGRADER_ROOT:-/autograder}"
mkdir -p "$root/results"
cd "$root/source"
exec env -u LLAMA3_PROMPT -u LLAMA3_EXPORT_DIR .venv/bin/python -m grader.gradescope \\
    "$root/submission" "$root/results/results.json"
"""


class BundleError(Exception):
    """The bundle cannot be written where asked; the message says why."""


def target(out: Path) -> Path:
    """The zip to write for ``OUT``: ``OUT`` itself when it ends in .zip, else ``OUT/gradescope-autograder.zip``.

    Raises:
        BundleError: ``OUT`` is a file that is not a .zip, or the zip's path is a folder.
    """
    path = out if out.suffix == ".zip" else out / NAME
    if out.suffix != ".zip" and out.exists() and not out.is_dir():
        raise BundleError(f"{plumbing.display_path(out)} is a file: give a folder, or a path ending in .zip")
    if path.is_dir():
        raise BundleError(f"{plumbing.display_path(path)} is a folder: give a path for the zip")
    return path


def files(staging: Path) -> dict[str, tuple[Path | str, int]]:
    """The bundle's entries: name in the zip -> (a file, or a text) and its mode, ``setup.sh`` and ``run_autograder``
    first; the student edition is written into ``staging``.

    Raises:
        student.StudentError: see tools/student.py.
    """
    entries: dict[str, tuple[Path | str, int]] = {"setup.sh": (SETUP, 0o755), "run_autograder": (RUN_AUTOGRADER, 0o755)}
    for name in classroom_template.COPIED:
        src = REPO_ROOT / name
        found = [src] if src.is_file() else sorted(p for p in src.rglob("*") if p.is_file())
        for path in found:
            relative = path.relative_to(REPO_ROOT)
            if not any(part.startswith(".") or part == "__pycache__" for part in relative.parts) and path.suffix != ".pyc":
                entries[relative.as_posix()] = (path, 0o644)
    classroom_template.write_notebooks(staging)
    for path in sorted((staging / "notebooks").glob("[0-9][0-9]_*.ipynb")):  # the English edition, not notebooks/zh/
        entries[f"notebooks/{path.name}"] = (path, 0o644)
    return entries


def write_bundle(path: Path) -> int:
    """Write the bundle to ``path`` through a temporary file beside it; returns its number of files.

    Raises:
        student.StudentError: see tools/student.py.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="llama3-gradescope-") as staging:
        entries = files(Path(staging))

        def write(tmp: Path) -> None:
            with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
                for name, (source, mode) in entries.items():
                    info = zipfile.ZipInfo(name, DATE)
                    info.external_attr = (0o100000 | mode) << 16
                    info.compress_type = zipfile.ZIP_DEFLATED
                    zf.writestr(info, source if isinstance(source, str) else source.read_bytes())

        plumbing.paths.atomic_write(path, write)
    return len(entries)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help=f"a folder (the zip is {NAME} in it) or a path ending in .zip")
    args = parser.parse_args(argv)
    try:
        path = target(args.out)
        count = write_bundle(path)
    except (BundleError, student.StudentError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(
        f"{plumbing.display_path(path)}: Gradescope's autograder bundle, {count} files, "
        f"{path.stat().st_size / 2**20:.1f} MiB (docs/instructor.md, section 5, says how to set it up)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
