"""What benchmarks/bench.py measures in fresh processes, one small self-contained program a module.

Each runs as ``python benchmarks/probes/NAME.py ARGS`` from the repository root; its last line, ``BENCH {json}``,
gives its own timings (``seconds`` for the load or build; ``forward``, ``cpu`` and ``decode`` where it measures them).
"""
