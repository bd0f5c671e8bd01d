"""The assistant's turn beyond its tool calls: the answer check, check-act, replanning, memory,
persona, skills and their drafts, slash commands, pipeline replies, run retention.

Pure: imports only ``reins.schemas``, other ``reins.policies`` packages, the standard library's
pure modules and pydantic; no I/O, no model, no LangGraph (checked by tests/policies/test_policies_are_pure.py).
"""
