"""Where the bundled resources and run-time files live."""

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
RESOURCES = PROJECT_ROOT / "resources"
BUNDLED_DOCS = RESOURCES / "docs"
STATE_DIR = Path(".reins")
