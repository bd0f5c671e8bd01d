"""The three-baseline evaluation of DESIGN §7: a scenario set, two simple baselines next to the
controlled delivery chain, a seeded unreliable-model wrapper, a scorer and a report."""
