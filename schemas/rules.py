"""Cross-field rule failures with stable codes and field paths.

A cross-field validator that raised a bare ``ValueError`` reached the model's single repair as
``{"path": "$", "code": "value_error"}``: the model could not tell what to fix and resent the same
object. Validators here report every broken rule as a ``(path, code)`` pair instead, e.g.
``reviewer_roles: required_for_branch_execute`` or ``delivery_phases.2.depends_on_phase_keys:
unknown_phase_key``. The repair feedback names the rule and the field; it never echoes the output
(the input of each error is left empty).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

MAX_RULE_ERRORS = 10


@dataclass(frozen=True)
class Broken:
    """One broken cross-field rule: where (a path inside the object) and which rule (a stable code)."""

    path: tuple[str | int, ...]
    code: str
    message: str


def raise_broken(title: str, broken: Sequence[Broken]) -> None:
    """Raise one ``ValidationError`` listing every broken rule (nothing when the list is empty).

    Raised from a model validator, pydantic prefixes each path with the object's own location, so a
    rule broken inside ``findings.3`` is reported as ``findings.3.<path>``.
    """
    if not broken:
        return
    details = [
        InitErrorDetails(type=PydanticCustomError(item.code, item.message.replace("{", "(").replace("}", ")")),
                         loc=item.path, input=None)
        for item in broken[:MAX_RULE_ERRORS]
    ]
    raise ValidationError.from_exception_data(title, details)


def rule_error(code: str, message: str) -> PydanticCustomError:
    """For a field validator: the field is the path, ``code`` names the rule."""
    return PydanticCustomError(code, message.replace("{", "(").replace("}", ")"))
