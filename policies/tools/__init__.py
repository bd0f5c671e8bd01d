"""What happens to a proposed tool call: approvals and their claims, data flow and provenance, egress,
purpose and obfuscation checks, batches, loop guards, HTTP access, server questions, call advice.

Pure: imports only ``reins.schemas``, other ``reins.policies`` packages, the standard library's
pure modules and pydantic; no I/O, no model, no LangGraph (checked by tests/policies/test_policies_are_pure.py).
"""
