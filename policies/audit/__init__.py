"""Auditing a run after the fact: counterfactual replay in all its forms (decisions, data flow, the
tasklist, contracts), guard coverage, worst-case budgets, what traces may carry.

Pure: imports only ``reins.schemas``, other ``reins.policies`` packages, the standard library's
pure modules and pydantic; no I/O, no model, no LangGraph (checked by tests/policies/test_policies_are_pure.py).
"""
