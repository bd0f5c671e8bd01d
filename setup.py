"""Packaging of the one import name, ``reins``.

The project's folders stay at the repository's top level (``graphs/``, ``nodes/``, ``policies/`` …)
and are installed as packages of ``reins`` (``reins.graphs``, ``reins.nodes`` …), so a user's own
``schemas.py`` or ``nodes.py`` beside a notebook never shadows them. The same mapping serves the wheel
and the editable checkout (setuptools' editable finder), with no ``sys.path`` edits anywhere.
Everything else about the distribution is declared in pyproject.toml.
"""

from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
FOLDERS = ("benchmarks", "cli", "evals", "graphs", "nodes", "policies", "resources", "runtime", "schemas")
DATA_FOLDERS = ("evals", "resources")  # bundled inputs besides the code


class BuildWithGraphConfig(build_py):
    """Ships ``langgraph.json`` (the graphs' entry points, read by ``reins graph``) as package data."""

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "reins" / "resources" / "langgraph.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((ROOT / "langgraph.json").read_bytes())


setup(
    package_dir={"reins": "reins", **{f"reins.{folder}": folder for folder in FOLDERS}},
    packages=["reins", *(f"reins.{folder}" for folder in FOLDERS),
              *(f"reins.{folder}.{sub}" for folder in FOLDERS for sub in find_packages(folder))],
    package_data={f"reins.{folder}": ["**/*.md", "**/*.json", "**/*.txt", "**/*.yaml"] for folder in DATA_FOLDERS},
    cmdclass={"build_py": BuildWithGraphConfig},
)
