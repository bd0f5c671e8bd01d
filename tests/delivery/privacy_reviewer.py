"""A fourth reviewer, as a team would add one: a schema, a prompt, a spec (and an offline rule)."""

from __future__ import annotations

from typing import Literal

import pytest

from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS, Reviewers, ReviewerSpec
from reins.schemas.delivery import Findings, Markdown, Strict, Text


class PrivacyReview(Strict):
    role: Literal["privacy"]
    privacy_status: Literal["clear", "needs_dpo", "blocked"]
    findings: Findings
    markdown: Markdown
    summary: Text


PRIVACY = ReviewerSpec(
    role="privacy", tool="privacy-subagent", contract="delivery.privacy_review", schema=PrivacyReview,
    verdict_field="privacy_status", levels={"clear": "ok", "needs_dpo": "concern", "blocked": "blocker"},
    title="Privacy", instruction="Privacy review: personal data needs a purpose, a retention period and consent.",
    context=("governance", "scenario_context"), focus="Personal data: purpose, retention, consent.",
)
FOUR = Reviewers((*DEFAULT_REVIEWERS, PRIVACY))


@pytest.fixture
def privacy_contract_forgotten():
    """A graph built with this reviewer registers its contract; forget it afterwards so the global
    contract table is as other tests expect it."""
    from reins.runtime.contracts import CONTRACT_ROLES

    known = PRIVACY.contract in CONTRACT_ROLES
    yield
    if not known:
        CONTRACT_ROLES.pop(PRIVACY.contract, None)


def privacy(status: str = "clear") -> dict:
    return {"role": "privacy", "privacy_status": status, "findings": [], "markdown": f"# Privacy\n\n{status}",
            "summary": f"Privacy {status}."}


def privacy_rule(request) -> dict:
    """The offline rule: an email address is personal data the requirement gives no purpose for."""
    return privacy("blocked" if "email address" in request.inputs["requirement"].lower() else "clear")
