"""``python -m track_gen_isaac.report curve <run_dir> ...`` (see :mod:`track_gen_isaac.report.cli`)."""

import sys

from track_gen_isaac.report.cli import main

sys.exit(main())
