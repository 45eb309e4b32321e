"""Guards for `make test` (strict nbval compares against outputs made on the stand-in) and test markers."""

import pytest

import plumbing

#: Tests that take more than a few seconds without executing a notebook (see the `slow` marker).
SLOW_MODULES = {"test_site.py", "test_site_browser.py", "test_site_browser_learner.py", "test_bench.py", "test_launch.py"}
#: The files that take longest, longest first: `make test` starts them first (pytest-xdist's --no-loadscope-reorder keeps
#: this order), so that no long file is left to start last while the other worker has nothing to do.
FIRST = (
    "tests/notebooks/test_reproducibility.py",
    "tests/grading/test_grading_cases.py",
    "tests/grading/test_grading.py",
    "tests/site/test_site_browser.py",
    "tests/site/test_launch.py",
    "tests/notebooks/test_llama32.py",
    "tests/grading/test_grading_inputs.py",
    "tests/grading/test_gradebook.py",
    "tests/notebooks/test_mutations.py",
)


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


def pytest_collection_modifyitems(config, items):
    """Mark what executes a notebook `notebook`, and the slow modules `slow`, so `make test-fast` can skip them; put
    the files of :data:`FIRST` first, in its order (the rest, and each file's tests, keep theirs)."""
    rank = {name: i for i, name in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(FIRST)))
    for item in items:
        if item.path.suffix == ".ipynb" or "run_notebook" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.notebook)
        if item.path.name in SLOW_MODULES or "site" in getattr(item, "fixturenames", ()):  # the site: a minute's build
            item.add_marker(pytest.mark.slow)
