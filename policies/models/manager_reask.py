"""What a refused manager turn's re-ask tells the model, and the advisory field the runtime fits (pure).

A re-ask that repeats the prompt byte for byte gets the same answer from a peaked model, even at a
higher temperature. So the re-ask carries the refusal's reason in the form a contract repair uses:
``{path, code}`` pairs, at most five, naming fields and rules only — never the rejected text. An
argument too long says by how much (``note: too_long (282 > 200)``); any other refusal names its rule
(``$: out_of_order``). Whether a turn is re-asked at all stays the delegation policy's decision.

The manager's ``note`` is advisory: no rule reads it, it only travels to the sub-agent as a hint. A
note over its bound is therefore cut to the bound by the runtime (``fit_advisory_args``) instead of
refusing a turn that is otherwise right; a note of the wrong type, or any other argument, is still
refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from reins.schemas.delivery import SubagentCallArgs

MAX_REASK_ISSUES = 5  # as many as a contract repair names
# The arguments a call carries when its JSON did not parse (the policy refuses them).
UNPARSED_ARGS: Mapping[str, Any] = {"__invalid_arguments__": True}


def _note_bound() -> int:
    schema = SubagentCallArgs.model_json_schema()
    for option in schema["properties"]["note"].get("anyOf", [schema["properties"]["note"]]):
        if option.get("type") == "string":
            return int(option["maxLength"])
    raise AssertionError("the note is a bounded string")  # pragma: no cover


# Advisory argument → its bound, read from the argument schema (declared once, there).
ADVISORY_BOUNDS: Mapping[str, int] = {"note": _note_bound()}


def fit_advisory_args(args: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """``args`` with each advisory string over its bound cut to the bound (surrounding whitespace
    stripped first, as the schema does), and the names of the fields cut. Anything else is left as
    it is for the policy to judge."""
    fitted, cut = dict(args), []
    for name, bound in ADVISORY_BOUNDS.items():
        value = fitted.get(name)
        if isinstance(value, str) and len(value.strip()) > bound:
            fitted[name] = value.strip()[:bound].rstrip()
            cut.append(name)
    return fitted, tuple(cut)


def _issue_code(error: Mapping[str, Any], value: Any) -> str:
    code = str(error.get("type", "invalid"))
    limit = (error.get("ctx") or {}).get("max_length")
    if code == "string_too_long" and isinstance(value, str) and isinstance(limit, int):
        return f"too_long ({len(value.strip())} > {limit})"
    return code


def argument_issues(args: Any) -> list[dict[str, str]]:
    """``{path, code}`` for what is wrong with one call's arguments (empty when they are valid).
    Only schema field names become paths; an invented key is named ``<key>``, never echoed."""
    if isinstance(args, Mapping) and dict(args) == dict(UNPARSED_ARGS):
        return [{"path": "$", "code": "invalid_json"}]
    try:
        SubagentCallArgs.model_validate(dict(args) if isinstance(args, Mapping) else args)
    except (ValidationError, TypeError, ValueError) as error:
        if not isinstance(error, ValidationError):
            return [{"path": "$", "code": "invalid_arguments"}]
        issues = []
        for item in error.errors():
            loc = [str(p) for p in item.get("loc", ())]
            known = loc and loc[0] in SubagentCallArgs.model_fields
            path = ".".join(loc) if known else ("<key>" if loc else "$")
            value = args.get(loc[0]) if known and isinstance(args, Mapping) else None
            issues.append({"path": path, "code": _issue_code(item, value)})
        return issues or [{"path": "$", "code": "invalid_arguments"}]
    return []


def refusal_issues(code: str, calls: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """The refusal's reason as ``{path, code}`` pairs: per call, its argument issues when the rule
    was ``invalid_tool_arguments`` (paths prefixed by the tool's name when several calls were made),
    else the rule itself at ``$``."""
    if code == "invalid_tool_arguments":
        issues = []
        for call in calls:
            prefix = "" if len(calls) == 1 else (f"{call.get('name')}." if _plain(call.get("name")) else "<tool>.")
            issues += [{"path": prefix + i["path"], "code": i["code"]} for i in argument_issues(call.get("args") or {})]
        if issues:
            return issues[:MAX_REASK_ISSUES]
    return [{"path": "$", "code": code}]


def _plain(name: Any) -> bool:
    text = str(name or "")
    return 0 < len(text) <= 64 and all(ch.isalnum() or ch in "-_" for ch in text)


def describe_issues(issues: Sequence[Mapping[str, str]]) -> str:
    """``note: too_long (282 > 200), $: out_of_order`` — the issues in one line (traces, messages)."""
    return ", ".join(f"{issue['path']}: {issue['code']}" for issue in issues[:MAX_REASK_ISSUES]) or "no details"
