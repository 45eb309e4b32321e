"""The import-only kernel's one cell: what every notebook imports before its first step, and nothing else.

benchmarks/bench.py runs this file's text as the only code cell of a notebook in a fresh kernel, the baseline each
notebook's memory is compared with. As a script (``python benchmarks/probes/import_only.py``) it just imports.
"""

import torch  # noqa: F401, I001  (the order of the notebooks' setup cells)
import matplotlib.pyplot as plt  # noqa: F401
import plumbing  # noqa: F401
