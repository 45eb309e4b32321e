"""``python -m plumbing COMMAND``: see :mod:`plumbing.cli`."""

import sys

from plumbing.cli import main

sys.exit(main())
