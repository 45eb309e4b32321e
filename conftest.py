"""Guards for `make test` (strict nbval compares against outputs made on the stand-in), test markers, and which tests
share a process when pytest-xdist runs the suite on several cores (`make test`)."""

from pathlib import PurePosixPath

import pytest

import plumbing

#: Tests that take more than a few seconds without executing a notebook (see the `slow` marker).
SLOW_MODULES = {"test_site.py", "test_site_browser.py", "test_site_browser_learner.py", "test_bench.py", "test_launch.py"}
#: Modules that use the course site (tests/conftest.py: ``site``, ``executed``, ``browser`` …): one process runs them
#: all, so the site is built once.
SITE_MODULES = {"test_site.py", "test_site_browser.py", "test_site_browser_learner.py", "test_site_build.py",
                "test_pdf.py"}
#: Modules whose tests share a module- or session-scoped fixture of their own (exports of a notebook run, a checkpoint
#: written once, decks): each runs in one process, which builds that fixture once. A notebook's nbval cells, too, run
#: in one process, in order. Any other test goes to whichever process is free.
SHARED_MODULES = {"test_01_tokenization.py", "test_02_embedding_lookup.py", "test_03_rmsnorm.py", "test_04_rope.py",
                  "test_05_attention.py", "test_06_feed_forward.py", "test_07_next_token.py", "test_08_generation.py",
                  "test_classroom_template.py", "test_gradescope.py", "test_llama32.py", "test_mutations.py",
                  "test_reproducibility.py", "test_slides.py", "test_smollm2.py", "test_weights.py"}
#: Work of minutes (build/test-times.xml), started first so that no process is left alone with it at the end.
FIRST = ("test_reproducibility.py", "test_llama32.py", "test_launch.py", "test_smollm2.py", *SITE_MODULES)


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
    """Mark what executes a notebook `notebook`, and the slow modules `slow`, so `make test-fast` can skip them; put the
    modules of minutes first."""
    for item in items:
        if item.path.suffix == ".ipynb" or "run_notebook" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.notebook)
        if item.path.name in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: item.path.name not in FIRST)  # stable: each notebook's cells stay in order


def work_unit(nodeid: str) -> str:
    """What pytest-xdist sends to one process as a whole: ``site``, a module or notebook, or the test alone."""
    file = nodeid.split("::", 1)[0]
    name = PurePosixPath(file).name
    if name in SITE_MODULES:
        return "site"
    if name in SHARED_MODULES or name.endswith(".ipynb"):
        return file
    return nodeid


def pytest_xdist_make_scheduler(config, log):
    """For ``-n N`` (``--dist load``): pytest-xdist's ``loadscope`` with this project's work units (``work_unit``).
    pytest-xdist's ``xdist_group`` marks are not used: under pytest 9, ``--dist loadgroup`` no longer sees them."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Scheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return Scheduling(config, log)
