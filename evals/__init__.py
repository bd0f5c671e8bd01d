"""The three-baseline evaluation: a scenario set, two simple baselines next to the
controlled delivery chain, a seeded unreliable-model wrapper, a scorer and a report."""
