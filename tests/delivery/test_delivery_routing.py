"""Where each deciding node of the delivery chain sends the run, from what it recorded (pure rules),
and that every rule's answer is one of the node's declared destinations."""

import pytest

from reins.nodes.delivery import routing

FAILED = {"failure": {"stage": "load", "code": "x", "message": "m"}}
COMPLETE = {"general": "completed", "risk": "completed", "boundary": "completed"}


@pytest.mark.parametrize(
    "rule, given, expected, destinations",
    [
        (routing.after_load, {}, "supervisor_pre", routing.AFTER_LOAD),
        (routing.after_load, FAILED, "fail_closed", routing.AFTER_LOAD),
        (routing.after_worker, {"delegated": ["draft_plan"]}, "manager", routing.AFTER_WORKER),
        (routing.after_worker, FAILED, "fail_closed", routing.AFTER_WORKER),
        (routing.after_synthesis, {"status": "pass", "coverage": COMPLETE}, "supervisor_post", routing.AFTER_SYNTHESIS),
        (routing.after_synthesis, {"status": "needs_changes", "coverage": COMPLETE}, "supervisor_post", routing.AFTER_SYNTHESIS),
        (routing.after_synthesis, {"status": "blocked", "coverage": COMPLETE}, "render_report", routing.AFTER_SYNTHESIS),
        (routing.after_synthesis, {"status": "needs_review", "coverage": {**COMPLETE, "risk": "timeout"}},
         "render_report", routing.AFTER_SYNTHESIS),
        (routing.after_synthesis, {"status": "failed", "coverage": {}}, "render_report", routing.AFTER_SYNTHESIS),
        (routing.after_post, {"revision_targets": ["plan", "tasks"]}, "revise_plan", routing.AFTER_POST),
        (routing.after_post, {"revision_targets": ["plan"]}, "revise_plan", routing.AFTER_POST),
        (routing.after_post, {"revision_targets": ["tasks"]}, "revise_tasks", routing.AFTER_POST),
        (routing.after_post, {"revision_targets": []}, "render_report", routing.AFTER_POST),
        (routing.after_plan_revision, {"revision_targets": ["plan", "tasks"]}, "revise_tasks", routing.AFTER_PLAN_REVISION),
        (routing.after_plan_revision, {"revision_targets": ["plan"]}, "render_report", routing.AFTER_PLAN_REVISION),
    ],
)
def test_routing_rules(rule, given, expected, destinations):
    assert rule(given) == expected
    assert expected in destinations
