"""Where the bundled resources and run-time files live.

The bundled documents are package data (``resources`` is a package the wheel ships), found through
``importlib.resources`` so an installed ``reins`` reads them from any working directory; a checkout
reads the same files in place.
"""

from importlib.resources import files
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]  # a checkout (README.md); site-packages when installed
RESOURCES = Path(str(files("reins.resources")))
BUNDLED_DOCS = RESOURCES / "docs"
# The graphs' entry points: the checkout's langgraph.json, else the copy the wheel ships as package data.
LANGGRAPH_JSON = next(
    (path for path in (PROJECT_ROOT / "langgraph.json", RESOURCES / "langgraph.json") if path.is_file()),
    PROJECT_ROOT / "langgraph.json",
)
