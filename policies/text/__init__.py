"""Text that leaves the runtime: redaction of secrets, truncation, JSON limits, text made safe to print
on a terminal.

Pure: imports only ``reins.schemas``, other ``reins.policies`` packages, the standard library's
pure modules and pydantic; no I/O, no model, no LangGraph (checked by tests/policies/test_policies_are_pure.py).
"""
