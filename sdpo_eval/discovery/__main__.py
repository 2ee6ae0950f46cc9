"""`python -m sdpo_eval.discovery`: the CLI (`sdpo_eval.discovery.cli`)."""
import sys

from sdpo_eval.discovery.cli import main

sys.exit(main())
