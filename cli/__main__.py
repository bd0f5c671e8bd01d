import sys

from reins.cli import main

sys.exit(main())
