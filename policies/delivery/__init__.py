"""The delivery chain's rules: the requirement's input, the manager's delegation, the reviewers, the
review bundle and status matrix, the derived revision, the report.

Pure: imports only ``reins.schemas``, other ``reins.policies`` packages, the standard library's
pure modules and pydantic; no I/O, no model, no LangGraph (checked by tests/policies/test_policies_are_pure.py).
"""
