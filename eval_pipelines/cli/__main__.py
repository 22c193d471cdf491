"""``python -m eval_pipelines.cli``."""

import sys

from eval_pipelines.cli.app import main

sys.exit(main())
