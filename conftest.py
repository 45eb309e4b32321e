"""Guards for `make test`: strict nbval compares against outputs made on the stand-in."""

import sys
from pathlib import Path

import pytest

import plumbing


def pytest_configure(config):
    strict = getattr(config.option, "nbval", False)
    try:
        real = not plumbing.is_standin(plumbing.resolve_dir())
    except plumbing.Llama3Error as e:
        pytest.exit(f"error: {e}", returncode=2)
    if strict and real:
        pytest.exit(
            "Strict nbval (--nbval) compares every output with the committed ones, which were made on the "
            "synthetic stand-in; with real weights (LLAMA3_DIR is set) the values differ everywhere. Run "
            "`make test`, which switches to --nbval-lax: weights-independent outputs (cells tagged "
            "nbval-check-output) are compared and every in-notebook check still runs.",
            returncode=4,
        )
