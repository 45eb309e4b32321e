"""``python -m plumbing build-standin | check-weights | nbval-flag`` (see :func:`plumbing.main`)."""

import sys

from plumbing import main

sys.exit(main())
