"""The course build (site, PDF, slides, Chinese and student editions, course kit), run as ``python -m tools.NAME``.

Run from the repository root; CONTRIBUTING.md's table says what each module does."""
