"""How a model is called and what is done with its answer: fallbacks, escalation, retries and
deadlines, second attempts, re-asks, runaway text, provider schemas, tool choice, text tool calls,
model notices, vision.

Pure: imports only ``reins.schemas``, other ``reins.policies`` packages, the standard library's
pure modules and pydantic; no I/O, no model, no LangGraph (checked by tests/policies/test_policies_are_pure.py).
"""
