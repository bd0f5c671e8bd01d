"""State of the assistant graph, and the records it holds.

``messages`` is the conversation (short-term memory, trimmed to the window each turn); every other
key describes the current turn only and is reset when a turn starts. All values are plain data
(the records are ``TypedDict``s: dicts at run time) so checkpoints stay strict-msgpack safe.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Annotated, Any

from langchain_core.messages import AnyMessage
from langgraph.types import Overwrite

# typing_extensions: pydantic builds the graph's JSON schemas from these on Python 3.11.
from typing_extensions import NotRequired, TypedDict

from reins.policies.audit.contract_replay import recorded_label
from reins.policies.audit.flow_replay import flow_turn, kept_turns
from reins.policies.assistant.retention import run_status
from reins.runtime.execution.steps import METRICS_KEY, ContractMetrics
from reins.runtime.execution.user_input import add_redacted_messages
from reins.schemas.assistant import Intent, Verdict
from reins.schemas.trace import TraceRecord


class Answer(TypedDict):
    """The reply as checked (``answer``), or the model's draft before the check (``draft``)."""

    summary: str
    evidence: list[str]
    verdict: Verdict


class PlanStep(TypedDict):
    id: int
    tool: str
    purpose: str


class Plan(TypedDict):
    """A COMPLEX request's plan: its steps naming chat tools; ``unavailable``: the tools of the
    steps the runtime dropped (not in the chat scope)."""

    goal: str
    steps: list[PlanStep]
    unavailable: list[str]
    replaced: NotRequired[list[int]]  # steps that failed twice and were replanned (at most one)
    replacement: NotRequired[list[int]]  # the steps the replan added
    skipped: NotRequired[list[int]]  # steps given up after repeated failures


class PendingCall(TypedDict):
    """A tool call the loop guards let through, waiting to run; ``error``: why it cannot (then it
    is recorded as an observation without running); ``n``: its record number."""

    tool: str
    args: dict[str, Any]  # the tool's own arguments, validated against its schema before it runs
    error: NotRequired[str]
    n: NotRequired[int]
    flow: NotRequired[dict[str, Any]]  # the data-flow decision: execution, where each sink value came from


class FlowRecord(TypedDict):
    """A let-through call's execution and what it was decided from (``reins.policies.audit.flow_replay.flow_record``)."""

    n: int
    tool: str
    read_only: bool
    base: str  # the tool's approval trait: run | ask | question
    codes: list[str]  # the data-flow policy's pause (and refusing rule) codes
    refused: bool
    execution: str  # run | ask | question | refuse


class FlowTurn(TypedDict):
    """A finished turn's flow log, kept across turns for replay (``reins.policies.audit.flow_replay.flow_turn``)."""

    turn: int
    status: str  # how the turn ended (``reins.policies.assistant.retention.run_status``)
    log: list[FlowRecord]
    answer: dict[str, Any] | None  # the answer contract's output: {contract, recorded, value} (``kept_answer``)


class ToolRecord(TypedDict):
    """One executed call: what ran, which plan step it served, what came back (errors included)."""

    n: int
    step: int | None
    tool: str
    args: dict[str, Any]
    ok: bool
    output: str
    changed: NotRequired[bool]  # True: a side-effecting call that succeeded (progress for the stall guard)


class Observed(TypedDict):
    """One finished call from a (possibly parallel) tool step, before ``observe`` records it."""

    record: ToolRecord
    trace: TraceRecord


def allow_more(left: list[str] | None, right: list[str] | None) -> list[str]:
    """Tools allowed for the rest of the thread: each approval with ``"scope": "thread"`` adds one."""
    return list(dict.fromkeys([*(left or []), *(right or [])]))


def gather(left: list[Observed] | None, right: list[Observed] | None) -> list[Observed]:
    """Parallel calls add their observations; ``None`` empties the list once they are recorded."""
    return [] if right is None else [*(left or []), *right]


class RemovedClaim(TypedDict):
    tool: str
    reason: str


class CheckReport(TypedDict):
    """What the check changed in the draft."""

    removed_claims: list[RemovedClaim]
    markers_removed: int
    unfinished_steps: list[int]
    proposed_verdict: Verdict


class SkillDraftRecord(TypedDict):
    """A proposed skill (``assistant.skill_draft``) and where its review is recorded in the store."""

    name: str
    description: str
    instructions: str
    key: str
    topic: list[str]


class PipelineOutcome(TypedDict):
    """A slash command's outcome: its status and, for a pipeline run, the reply body."""

    command: str
    status: str
    summary: NotRequired[str]
    tool_calls: NotRequired[int]  # the pipeline's own tool calls, charged to the turn's budget


class PipelineReview(TypedDict):
    """A pipeline's review pause, announced in the chat and waited for in the pipeline's next step:
    its interrupt payload and the JSON schema of an answer."""

    value: Any
    response_schema: dict[str, Any] | None


class TurnIdentity(TypedDict):
    """Who a turn acts for: the user id and memory scope its context gave when it started."""

    user_id: str
    memory_scope: str


class PersonaExample(TypedDict):
    request: str
    answer: str


class Persona(TypedDict):
    """The user's instructions and few-shot examples for this turn's prompts (runtime.config.persona)."""

    instructions: str
    examples: list[PersonaExample]


class Turn(TypedDict):
    role: str
    text: str
    after_untrusted: NotRequired[bool]  # a reply written after untrusted content had entered its turn


class AssistantInput(TypedDict):
    messages: Annotated[list[AnyMessage], add_redacted_messages]


class AssistantOutput(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_redacted_messages]
    reply: str
    answer: Answer | None
    intent: Intent | None
    intent_failed: bool  # the intent contract failed: the turn was answered as QA, unverified
    failure: str | None  # a model call the provider failed for good: "<stage> failed: <cause>"
    plan: Plan | None
    records: list[ToolRecord]
    stop_reason: str | None
    check: CheckReport | None
    pipeline: PipelineOutcome | None
    trace: list[TraceRecord]  # this turn's steps, in order
    contract_metrics: ContractMetrics  # this turn's model calls (reset with the trace)


class AssistantState(AssistantOutput, total=False):
    request: str
    images: list[dict[str, Any]]  # the request's image blocks: the turn goes to the vision role
    input_refusal: str | None  # why the turn is refused before any model call (an image, no vision model)
    conversation: list[Turn]  # the window before the current request
    conversation_summary: str  # rolling summary of the turns the window dropped (kept across turns)
    recollections: list[str]
    skills: list[str]  # level 0: "name: description" of every usable skill
    persona: Persona | None  # the user's instructions and examples, read when the turn starts
    steps_taken: int  # tool calls dispatched this turn (the loop budget counts every call)
    pending_calls: list[PendingCall]
    flow_log: list[FlowRecord]  # every let-through call's execution this turn: what a replay re-decides
    flow_turns: list[FlowTurn]  # the earlier turns' flow logs (kept across turns, the latest 50)
    identity: TurnIdentity  # who the turn acts for, kept across a pause (nodes/assistant/identity.py)
    allowed_tools: Annotated[list[str], allow_more]  # tools a person allowed for the rest of the thread (kept)
    observed: Annotated[list[Observed], gather]
    draft: Answer | None
    answer_from_contract: bool  # the draft is the answer contract's output (not the runtime's fallback)
    check_findings: list[dict[str, str]]  # {code, where} of the check that sent the turn back
    check_rounds: int  # check → act rounds taken (at most one)
    revisit: bool  # the check sends the turn back to the tool loop
    draft_topic: list[str]  # a successful COMPLEX turn's topic, to weigh a skill draft (review runs only)
    skill_draft: SkillDraftRecord | None  # the draft waiting for a person's review
    pipeline_review: PipelineReview | None  # a pipeline's review pause, announced and waited for next


ANSWER_CONTRACT = "assistant.answer"

# A node's state update (any subset of the state), and a model-calling node's generator of it.
Update = AssistantState
NodeSteps = Generator[Any, Any, Update]


def traced(state: AssistantState, *records: TraceRecord) -> list[TraceRecord]:
    """The turn's trace with this node's records added (the trace is replaced, not merged, so a
    new turn can reset it)."""
    return [*state.get("trace", []), *records]


def fresh_turn(state: AssistantState | None = None) -> Update:
    """The per-turn keys at the start of a turn (a checkpointed thread keeps the previous turn's):
    the trace and the metrics start again together, so both describe this turn only. The previous
    turn's flow log, when a turn ran before this one on the thread, joins the kept ones."""
    state = state or {}
    kept = state.get("flow_turns") or []
    ended = (flow_turn((kept[-1]["turn"] if kept else 0) + 1, run_status(state, False), state.get("flow_log") or [],
                       kept_answer(state)) if state.get("trace") else None)
    return {
        "flow_turns": kept_turns(kept, ended),
        "reply": "",
        "answer": None,
        "intent": None,
        "intent_failed": False,
        "failure": None,
        "plan": None,
        "records": [],
        "stop_reason": None,
        "check": None,
        "pipeline": None,
        "trace": [],
        METRICS_KEY: Overwrite({}),  # past the reducer, which would add this turn's calls to the thread's
        "request": "",
        "images": [],
        "input_refusal": None,
        "conversation": [],
        "recollections": [],
        "skills": [],
        "persona": None,
        "steps_taken": 0,
        "pending_calls": [],
        "flow_log": [],
        "observed": None,
        "draft": None,
        "answer_from_contract": False,
        "check_findings": [],
        "check_rounds": 0,
        "revisit": False,
        "draft_topic": [],
        "skill_draft": None,
        "pipeline_review": None,
    }


def kept_answer(state: AssistantState) -> dict[str, Any] | None:
    """The turn's answer as the answer contract gave it, for replay: accepted on the first answer or
    repaired (from the turn's metrics); None when the runtime wrote a fallback or no answer ran."""
    draft = state.get("draft")
    if not draft or not state.get("answer_from_contract"):
        return None
    return {"contract": ANSWER_CONTRACT, "recorded": recorded_label(state.get(METRICS_KEY), ANSWER_CONTRACT),
            "value": dict(draft)}
