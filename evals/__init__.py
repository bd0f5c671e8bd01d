"""The three-baseline evaluation: a scenario set, two simple baselines next to the
controlled delivery chain, a seeded unreliable-model wrapper, a scorer and a report.

Importing the package registers the baselines' contracts with the runtime and their offline
responders with the offline model, so both are known wherever an evaluation module is used."""

from reins.evals import contracts as _contracts  # noqa: F401
from reins.evals import offline as _offline  # noqa: F401
