"""``python -m forgelab`` — the same as the ``forgelab`` command."""

import sys

from forgelab.cli.launch import main

sys.exit(main())
