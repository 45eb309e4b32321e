"""The course build, run from the repository root as ``python -m tools.NAME``: the site, the PDF, the slides, the
Chinese and student editions, the course kit (CONTRIBUTING.md's table says what each module does)."""
