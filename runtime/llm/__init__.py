"""Models and the calls to them: roles and their policies, labels, fallbacks, escalation, the
probe, and the one place failures are classified."""
