"""When a request goes once more, to the role's escalation model (pure).

A cheap model that keeps failing one request in the same way — a manager turn refused again after
its re-ask, a contract still invalid after its one repair — gets no third try of its own: the same
request goes once to the stronger model configured for the role (``REINS_MODEL_ESCALATE`` or an
``escalate=`` entry of its fallback list), under the same policy and checks. Provider failures are
not escalated: those are the fallbacks' to handle.
"""

from __future__ import annotations

CONTRACT_ATTEMPTS = 2  # a contract's first answer and its one repair


def escalation_allowed(*, configured: bool, failed_attempts: int, allowed_attempts: int, escalated: bool) -> bool:
    """Whether the request goes to the escalation model now: one is configured for the role, the
    primary has used every attempt it is allowed (``failed_attempts`` ≥ ``allowed_attempts``) and the
    request has not been escalated yet (never twice)."""
    return configured and not escalated and failed_attempts >= allowed_attempts >= 1
