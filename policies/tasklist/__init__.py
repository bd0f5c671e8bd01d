"""The tasklist agent's rules: the state machine that authorises every action, the plan's readiness,
structural validation, human review.

Pure: imports only ``reins.schemas``, other ``reins.policies`` packages, the standard library's
pure modules and pydantic; no I/O, no model, no LangGraph (checked by tests/policies/test_policies_are_pure.py).
"""
