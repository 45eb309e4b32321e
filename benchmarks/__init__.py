"""`make bench` and `make bench-models`: time and memory of the series, measured, never asserted (docs/performance.md)."""
