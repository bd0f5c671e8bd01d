"""How a contract's output is judged and how the one repair is asked: validation against the strict
schema (truncation and JSON limits first), the ``{path, code}`` issues it yields, the repair
feedback (paths and codes only, never the rejected output) and ``ContractError``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from langchain_core.messages import HumanMessage
from pydantic import BaseModel, ValidationError

from reins.policies.text.json_limits import JsonLimitError, check_json_value
from reins.policies.text.truncation import TRUNCATED, is_truncated
from reins.runtime.llm.failures import MAX_REPAIR_ISSUES, ContractError, ContractIssue  # noqa: F401 - ContractError named here too

T = TypeVar("T", bound=BaseModel)

# A path segment is echoed only when it looks like a field name or an index: an unknown key the model
# invented may carry prose (or an injection), and the repair must never feed the rejected output back.
_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$")


def _path_part(part: object) -> str:
    if isinstance(part, int):
        return str(part)
    return str(part) if _PLAIN_KEY.match(str(part)) else "<key>"


def _issues_from(error: ValidationError) -> list[ContractIssue]:
    issues = []
    for item in error.errors():
        path = ".".join(_path_part(part) for part in item.get("loc", ())) or "$"
        issues.append(ContractIssue(path=path, code=str(item.get("type", "invalid"))))
    return issues[:MAX_REPAIR_ISSUES]


def truncated(message: Any) -> bool:
    """The response stopped at the token limit (``finish_reason: length`` or a provider's equivalent)."""
    return is_truncated(getattr(message, "response_metadata", None))


TRUNCATED_ISSUE = ContractIssue(path="$", code=TRUNCATED)


def _validate(schema: type[T], raw: Mapping[str, Any]) -> tuple[T | None, list[ContractIssue]]:
    # Checked first: a cut-off object may still parse (as a shorter, different object).
    if truncated(raw.get("raw")):
        return None, [TRUNCATED_ISSUE]
    error = raw.get("parsing_error")
    if error is not None or raw.get("parsed") is None:
        return None, [ContractIssue(path="$", code=getattr(error, "code", None) if isinstance(error, JsonLimitError) else "invalid_json")]
    try:
        # A provider's parser has no depth limit of its own: nothing deeper reaches the schema.
        check_json_value(raw["parsed"])
    except JsonLimitError as limit:
        return None, [ContractIssue(path="$", code=limit.code)]
    try:
        return schema.model_validate(raw["parsed"]), []
    except ValidationError as error:
        return None, _issues_from(error)


TRUNCATION_HINT = "It was cut off at the output token limit: keep every text field short. "


def repair_message(contract: str, issues: Sequence[ContractIssue]) -> HumanMessage:
    """Feedback for the single repair: paths and codes only, never the rejected output."""
    listed = json.dumps([issue.as_dict() for issue in issues[:MAX_REPAIR_ISSUES]])
    shorter = TRUNCATION_HINT if any(issue.code == TRUNCATED for issue in issues) else ""
    return HumanMessage(
        content=(
            f"Your previous answer for {contract} did not satisfy the schema. "
            f"Problems as [{{path, code}}]: {listed}. {shorter}"
            "Answer again with one JSON object that satisfies the schema exactly; no extra fields."
        )
    )


def draft_repair_message(contract: str, looped: bool = False) -> HumanMessage:
    """The one repair of a free-text draft that was cut off at the token limit (``looped``: stopped
    because it repeated itself)."""
    why = ("was stopped because it repeated the same text over and over. Never repeat a line; "
           if looped else "was cut off at the output token limit. ")
    return HumanMessage(content=f"Your previous answer for {contract} {why}Answer again, complete and noticeably shorter.")
