"""mypy finds no error in the packages plumbing and grader, with the [tool.mypy] settings of pyproject.toml."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_mypy_is_clean_on_the_packages():
    command = [
        sys.executable,
        "-m",
        "mypy",
        "--config-file",
        str(ROOT / "pyproject.toml"),
        "-p",
        "plumbing",
        "-p",
        "grader",
        "--cache-dir",
        str(ROOT / "build" / "mypy_cache"),
    ]  # a warm cache: seconds instead of half a minute
    proc = subprocess.run(command, cwd=ROOT / "notebooks", capture_output=True, text=True)
    assert proc.returncode == 0, f"mypy found errors (fix the annotations):\n{proc.stdout}{proc.stderr}"
