"""The assistant's check phase: what the answer may say is decided by the execution record.

- A sentence that claims a tool result (``I called the calculator and got 42``) must be backed by a
  successful execution of that tool whose arguments or output contain the claimed values; otherwise
  it is flagged and removed.
- A sentence that says a side effect was done (``I have sent it``, ``the file was deleted``) must be
  backed by a successful call of a side-effecting tool in this turn; otherwise it is removed too.
- Leaked internal markers (``<ACTION>``, ``<PLAN>`` blocks, tool-call JSON, prompt tags, file links)
  are stripped from anything a user sees.
- Plan steps without a successful execution are reported as unfinished.
- The verdict the model proposes is capped by what the runtime saw.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, get_args

from reins.policies.text.redaction import truncate
from reins.schemas.assistant import Verdict

VERDICTS: tuple[str, ...] = get_args(Verdict)

# ``aliases`` below: how people (and models) refer to each tool in prose — declared with each tool
# (``RegisteredTool.aliases``) and passed in by the caller.

# Verbs that turn a mention of a tool into a claim about its result (past tense / result words only,
# so "I can use the calculator" is not a claim).
_CLAIM_WORDS = re.compile(
    r"\b(called|calling|used|ran|invoked|executed|queried|consulted|checked|returned|returns|gave|gives|got|"
    r"produced|reported|reports|says|said|shows|showed|fetched|retrieved|result|results|output|outputs|"
    r"according to)\b|调用|使用了|返回|结果|显示",
    re.I,
)
# Words that make a claim about a tool's failure ("the calculator refused: exponents above 1000 …").
_FAILURE_WORDS = re.compile(r"\b(refus\w*|rejected|errors?|fail\w*|could not|couldn't|cannot|not allowed)\b|失败|拒绝|错误", re.I)
# A sentence saying an action was done: a first-person or passive past form of an effect verb, with
# nothing (no "not") between the subject and the verb.
_EFFECT_VERBS = (r"(?:sent|transferred|paid|wrote|written|deleted|removed|created|scheduled|booked|reserved|"
                 r"updated|changed|posted|invited|added|saved|stored|moved|cancell?ed|forwarded|shared|uploaded|"
                 r"e-?mailed|messaged|submitted|renamed|replied|granted|revoked)")
_EFFECT_CLAIM = re.compile(
    rf"\b(?:I|we)(?:'ve|\s+have|\s+had)?(?:\s+(?:just|already|also|now|successfully))*\s+{_EFFECT_VERBS}\b"
    rf"|\b(?:has|have|was|were|is|are)\s+(?:now\s+|just\s+|already\s+)?(?:been\s+)?(?:successfully\s+)?{_EFFECT_VERBS}\b"
    r"|已(?:发送|转账|支付|删除|创建|保存|更新)",
    re.I,
)
SIDE_EFFECT = "side effect"  # the tool a finding names when a sentence claims an action was done
_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)*")
# A sentence ends at . ! ? followed by space or end (so 3.5 and example.com stay whole), at 。！？ or a newline.
_SENTENCE = re.compile(r"\S[^\n]*?(?:[.!?](?=\s|$)|[。！？]|(?=\n)|$)")

# Internal markers: whole blocks are dropped, stray tags are dropped.
_BLOCK_TAGS = ("action", "plan", "content", "think", "thinking", "thought", "tool_call", "observations", "recollections")
_STRAY_TAGS = (*_BLOCK_TAGS, "request", "conversation", "tools", "mode", "stop", "draft", "skills", "findings")
_BLOCK = re.compile(rf"<({'|'.join(_BLOCK_TAGS)})\b[^>]*>.*?</\1\s*>", re.I | re.S)
_STRAY = re.compile(rf"</?({'|'.join(_STRAY_TAGS)})\b[^>]*>", re.I)
_FILE_LINK = re.compile(r"\b(?:open-file|file):///\S*", re.I)
_EMPTY_FENCE = re.compile(r"```[a-z]*\s*```", re.I)


@dataclass(frozen=True)
class ClaimFinding:
    tool: str
    reason: str  # no_execution | value_mismatch | no_side_effect
    sentence: str
    where: str = "summary"  # summary | evidence[<i>]


@dataclass(frozen=True)
class CheckedText:
    text: str
    findings: tuple[ClaimFinding, ...] = ()
    markers_removed: int = 0


@dataclass(frozen=True)
class AnswerCheck:
    summary: str
    evidence: tuple[str, ...]
    findings: tuple[ClaimFinding, ...] = ()
    markers_removed: int = 0
    unfinished_steps: tuple[int, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)


# ------------------------------------------------------------------------------------ markers


def _looks_like_tool_call(value: Any) -> bool:
    if isinstance(value, list):
        return bool(value) and all(_looks_like_tool_call(v) for v in value)
    if not isinstance(value, dict):
        return False
    keys = set(value)
    if keys & {"tool_calls", "function_call", "stepId", "step_id"}:
        return True
    if "tool" in keys and keys & {"parameters", "args", "arguments", "params", "type"}:
        return True
    return "name" in keys and bool(keys & {"arguments", "args", "parameters"})


def _strip_tool_call_json(text: str) -> tuple[str, int]:
    decoder = json.JSONDecoder()
    out: list[str] = []
    removed = 0
    position = 0
    while position < len(text):
        start = min((i for i in (text.find("{", position), text.find("[", position)) if i >= 0), default=-1)
        if start < 0:
            break
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            out.append(text[position : start + 1])
            position = start + 1
            continue
        out.append(text[position:start])
        if _looks_like_tool_call(value):
            removed += 1
        else:
            out.append(text[start:end])
        position = end
    out.append(text[position:])
    return "".join(out), removed


def strip_internal_markers(text: str) -> tuple[str, int]:
    """Remove internal blocks, stray tags, tool-call JSON and file links; return (text, removed count)."""
    value = text or ""
    value, blocks = _BLOCK.subn("", value)
    value, stray = _STRAY.subn("", value)
    value, links = _FILE_LINK.subn("", value)
    value, calls = _strip_tool_call_json(value)
    value = _EMPTY_FENCE.sub("", value)
    value = re.sub(r"[ \t]+\n", "\n", value)
    value = re.sub(r"\n{3,}", "\n\n", value)
    value = re.sub(r"[ \t]{2,}", " ", value)
    return value.strip(), blocks + stray + links + calls


# ------------------------------------------------------------------------------------ claims


def _mentioned_tools(sentence: str, aliases: Mapping[str, Sequence[str]]) -> list[str]:
    lowered = sentence.lower()
    found = []
    for tool, names in aliases.items():
        if any(_mentions(lowered, name.lower()) for name in (tool, *names)):
            found.append(tool)
    return found


def _mentions(text: str, name: str) -> bool:
    if not name.isascii():  # CJK has no word boundaries
        return name in text
    return re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text) is not None


def _numbers(text: str) -> set[str]:
    values = set()
    for raw in _NUMBER.findall(text):
        cleaned = raw.replace(",", "")
        try:
            number = float(cleaned)
        except ValueError:
            continue
        values.add(str(int(number)) if number.is_integer() else repr(number))
    return values


def _record_text(record: Mapping[str, Any]) -> str:
    return f"{json.dumps(record.get('args') or {}, ensure_ascii=False, default=str)} {record.get('output', '')}"


def find_unsupported_claims(
    text: str, records: Sequence[Mapping[str, Any]], aliases: Mapping[str, Sequence[str]]
) -> tuple[ClaimFinding, ...]:
    """Sentences claiming a tool result that no successful execution of that tool backs."""
    findings = []
    for match in _SENTENCE.finditer(text or ""):
        sentence = match.group(0).strip()
        if not _CLAIM_WORDS.search(sentence):
            continue
        for tool in _mentioned_tools(sentence, aliases):
            runs = [r for r in records if r.get("tool") == tool and r.get("ok")]
            failed = [r for r in records if r.get("tool") == tool and not r.get("ok")]
            if not runs and failed and _FAILURE_WORDS.search(sentence):
                runs = failed  # a claim about the failure itself, quoting the tool's own refusal
            if not runs:
                findings.append(ClaimFinding(tool, "no_execution", sentence))
                continue
            claimed = _numbers(sentence)
            seen = set().union(*(_numbers(_record_text(r)) for r in runs))
            if claimed - seen:
                findings.append(ClaimFinding(tool, "value_mismatch", sentence))
    return tuple(findings)


def find_unsupported_effect_claims(
    text: str, records: Sequence[Mapping[str, Any]], side_effects: Collection[str]
) -> tuple[ClaimFinding, ...]:
    """Sentences saying an action was done when no side-effecting tool (``side_effects``) succeeded
    this turn (a rejected or refused call did not happen)."""
    if any(r.get("ok") and r.get("tool") in side_effects for r in records):
        return ()
    return tuple(ClaimFinding(SIDE_EFFECT, "no_side_effect", m.group(0).strip())
                 for m in _SENTENCE.finditer(text or "") if _EFFECT_CLAIM.search(m.group(0)))


def remove_unsupported_claims(
    text: str, records: Sequence[Mapping[str, Any]], aliases: Mapping[str, Sequence[str]],
    side_effects: Collection[str] | None = None,
) -> CheckedText:
    """Strip markers, then drop every sentence with an unsupported tool claim (and, when the
    side-effecting tools are named, every unsupported claim that an action was done)."""
    cleaned, markers = strip_internal_markers(text)
    findings = find_unsupported_claims(cleaned, records, aliases)
    if side_effects is not None:
        claimed = {f.sentence for f in findings}
        findings += tuple(f for f in find_unsupported_effect_claims(cleaned, records, side_effects)
                          if f.sentence not in claimed)
    flagged = {f.sentence for f in findings}
    pieces, position = [], 0
    for match in _SENTENCE.finditer(cleaned):
        pieces.append(cleaned[position : match.start()])
        if match.group(0).strip() not in flagged:
            pieces.append(match.group(0))
        position = match.end()
    pieces.append(cleaned[position:])
    result = re.sub(r"[ \t]{2,}", " ", "".join(pieces))
    result = re.sub(r"\n{3,}", "\n\n", result).strip()
    return CheckedText(result, findings, markers)


# ------------------------------------------------------------------------------------ plan


def unfinished_plan_steps(plan_steps: Sequence[Mapping[str, Any]], records: Sequence[Mapping[str, Any]]) -> tuple[int, ...]:
    """Plan step ids with no successful execution record."""
    done = {r.get("step") for r in records if r.get("ok") and r.get("step") is not None}
    return tuple(int(s["id"]) for s in plan_steps if s.get("id") not in done)


def assign_plan_step(
    plan_steps: Sequence[Mapping[str, Any]], records: Sequence[Mapping[str, Any]], tool: str
) -> int | None:
    """The runtime (not the model) decides which plan step a tool run serves: the first unfinished
    step that names this tool."""
    return credit_plan_steps(plan_steps, records, (tool,))[0]


def credit_plan_steps(
    plan_steps: Sequence[Mapping[str, Any]], records: Sequence[Mapping[str, Any]], tools: Sequence[str]
) -> tuple[int | None, ...]:
    """The plan step each call of one batch serves, in call order: the first unfinished step that
    names its tool and that no earlier call of the batch took. Parallel calls run before any of them
    is recorded, so without the batch three calculator calls for a three-step plan would all serve
    step 1 and leave steps 2 and 3 unfinished."""
    taken = {r.get("step") for r in records if r.get("ok") and r.get("step") is not None}
    credited: list[int | None] = []
    for tool in tools:
        step = next((int(s["id"]) for s in plan_steps if s.get("id") not in taken and s.get("tool") == tool), None)
        if step is not None:
            taken.add(step)
        credited.append(step)
    return tuple(credited)


# ------------------------------------------------------------------------------------ verdict


def final_verdict(
    proposed: str,
    *,
    stop_reason: str | None = None,
    unfinished_steps: Sequence[int] = (),
    removed_claims: int = 0,
    records: Sequence[Mapping[str, Any]] = (),
    intent_failed: bool = False,
    unsupported_numbers: Sequence[str] = (),
) -> str:
    """The model proposes a verdict; the runtime caps it.

    failure stays failure; a turn whose intent contract failed (nothing decided which tools the
    request needed) is a failure; an answer stating numbers no tool result supports on a turn that
    needed tools is a failure; a task where every tool run failed is a failure; a stopped loop,
    unfinished plan steps, removed claims or any failed run cap success at partial.
    """
    verdict = proposed if proposed in VERDICTS else "failure"
    if verdict == "failure" or intent_failed or unsupported_numbers:
        return "failure"
    if records and not any(r.get("ok") for r in records):
        return "failure"
    if stop_reason or unfinished_steps or removed_claims or any(not r.get("ok") for r in records):
        return "partial"
    return verdict


def numbers_without_support(summary: str, records: Sequence[Mapping[str, Any]], request: str = "") -> tuple[str, ...]:
    """Numbers the answer states that neither the request nor a successful tool result contains.

    "The answer is 51" after a calculator returned 51 is supported; "The answer is 51" when no tool
    ran (or "17*3" echoed from the request is fine, but a result the model computed itself) is not.
    A failed run's own output counts too: quoting a refusal ("exponents above 1000 are not allowed")
    states what the tool said.
    """
    seen = _numbers(request).union(
        *(_numbers(_record_text(r) if r.get("ok") else str(r.get("output", ""))) for r in records)
    )
    return tuple(sorted(_numbers(summary) - seen))


def check_answer(
    summary: str,
    evidence: Sequence[str],
    records: Sequence[Mapping[str, Any]],
    plan_steps: Sequence[Mapping[str, Any]] = (),
    *,
    aliases: Mapping[str, Sequence[str]],
    side_effects: Collection[str] | None = None,
) -> AnswerCheck:
    """Run every check on a drafted answer and return the cleaned parts with what was found;
    ``side_effects``: the names of the side-effecting tools (claims that an action was done)."""
    checked_summary = remove_unsupported_claims(summary, records, aliases, side_effects)
    findings = list(checked_summary.findings)
    markers = checked_summary.markers_removed
    kept_evidence = []
    for index, item in enumerate(evidence):
        checked = remove_unsupported_claims(item, records, aliases, side_effects)
        findings.extend(replace(f, where=f"evidence[{index}]") for f in checked.findings)
        markers += checked.markers_removed
        if checked.text and not checked.findings:
            kept_evidence.append(checked.text)
    unfinished = unfinished_plan_steps(plan_steps, records)
    notes = []
    if findings:
        tools = ", ".join(sorted({f.tool for f in findings}))
        notes.append(f"removed {len(findings)} claim(s) about tool results with no matching execution ({tools})")
    if markers:
        notes.append(f"stripped {markers} internal marker(s)")
    if unfinished:
        notes.append(f"plan steps not finished: {', '.join(map(str, unfinished))}")
    return AnswerCheck(
        summary=checked_summary.text,
        evidence=tuple(kept_evidence),
        findings=tuple(findings),
        markers_removed=markers,
        unfinished_steps=unfinished,
        notes=tuple(notes),
    )


# ------------------------------------------------------------------------------------ rendering

MAX_EVIDENCE = 10
EVIDENCE_CHARS = 300


def _compact_args(args: Mapping[str, Any] | None) -> str:
    values = [str(v) for v in (args or {}).values() if v is not None]
    return ", ".join(values)


def evidence_from_records(records: Sequence[Mapping[str, Any]], limit: int = MAX_EVIDENCE) -> list[str]:
    """Evidence the runtime can vouch for: what each executed call returned (errors included)."""
    lines = []
    for record in records[:limit]:
        outcome = record.get("output", "") if record.get("ok") else f"error: {record.get('output', '')}"
        line = f"{record.get('tool')}({_compact_args(record.get('args'))}) → {outcome}"
        lines.append(truncate(line, EVIDENCE_CHARS))
    return lines


def merge_evidence(runtime_evidence: Sequence[str], model_evidence: Sequence[str], limit: int = MAX_EVIDENCE) -> list[str]:
    """Runtime evidence first, then the model's checked notes; duplicates dropped; bounded."""
    merged: list[str] = []
    for item in (*runtime_evidence, *model_evidence):
        if item and item not in merged:
            merged.append(item)
    return merged[:limit]


def fallback_summary(records: Sequence[Mapping[str, Any]]) -> str:
    """When no valid answer could be drafted: say so, and list what the tools returned."""
    ok = [r for r in records if r.get("ok")]
    if not ok:
        return "I could not produce a reliable answer to this request."
    results = "; ".join(f"{r.get('tool')} → {str(r.get('output', ''))[:120]}" for r in ok[:5])
    return f"I could not compose a full answer, but the tools returned: {results}"
