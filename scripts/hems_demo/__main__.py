"""Run the demo: ``scripts/demo`` calls ``python -m hems_demo`` with ``scripts/`` on the path."""

import sys

from .main import main

sys.exit(main())
