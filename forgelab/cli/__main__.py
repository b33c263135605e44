"""``python -m forgelab.cli`` — the same as the ``forgelab`` command."""

import sys

from forgelab.cli.main import main

sys.exit(main())
