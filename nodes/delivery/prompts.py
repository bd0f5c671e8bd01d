"""Prompts of the delivery chain. Inputs are tagged (``<requirement>``, ``<plan>``, ``<findings>`` …)
so any model can find them, and travel as structured values in the call's metadata too
(``reins.runtime.llm.prompt_inputs``), where the offline stand-in reads them; artifacts go in as JSON of their
validated fields without internal ids; nothing secret is in them (the requirement is redacted at load).

Every call's messages run from what changes least to what changes most, so a server's prefix cache
(llama.cpp's prompt cache, vLLM's prefix cache, a hosted provider's prompt caching) serves the start of
each prompt from an earlier one: first the system message, the same for every role of every run; then
what one run shares (the requirement, its scenario context, the plan, the tasks, in the order they come
to exist); then what the role alone reads (its governance and rubric documents, its focus, the manager's
note, findings) and last the role's own instruction. The three reviewers thus share everything up to
their own documents, and a repair or a re-ask resends a prompt whose whole start the server holds."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS, Reviewers, listed
from reins.runtime.llm.prompt_inputs import Prompt, Tagged
from reins.runtime.tools.registry import SubagentToolDefinition
from reins.runtime.resources import PROMPT_CHARS, cut_for_prompt
from reins.schemas.delivery import SubagentInput

# Loaded from demo://governance and demo://rubrics; when a file is missing the built-in text below
# stands in and the run carries a warning.
CONTEXT_DOCUMENTS: tuple[tuple[str, str, str], ...] = (
    ("governance", "Delivery boundaries", "demo://governance/delivery-boundaries.md"),
    ("governance", "Engineering rules", "demo://governance/engineering-rules.md"),
    ("rubric", "Plan rubric", "demo://rubrics/plan.md"),
    ("rubric", "Task rubric", "demo://rubrics/tasks.md"),
    ("rubric", "Review rubric", "demo://rubrics/review.md"),
    ("rubric", "Risk rubric", "demo://rubrics/risk.md"),
)
FALLBACK_DOCUMENTS: Mapping[str, str] = {
    "Delivery boundaries": (
        "The delivery chain plans and reviews; it never changes systems itself. Blocked: persisting raw "
        "delivery artifacts, touching real project files or production, bypassing reviews or policy. "
        "Needs review: changes to human review, checkpoints or the tasklist agent."
    ),
    "Engineering rules": "Every task names its target area and a verification; new behaviour gets tests.",
    "Plan rubric": "Phases are ordered and acyclic; every requirement has an acceptance criterion.",
    "Task rubric": "Tasks are small, ordered, acyclic and each carries acceptance criteria.",
    "Review rubric": "Check alignment, coverage of every requirement, priorities and clarity.",
    "Risk rubric": "Rate security, data handling, unresolved dependencies, complexity and test coverage.",
}

ROLE_CONTEXT: Mapping[str, tuple[str, ...]] = {
    # which context blocks each stage sees (kind or title); each reviewer's are in its spec
    "supervisor": ("governance", "scenario_context"),
    "plan": ("Plan rubric", "Engineering rules", "scenario_context"),
    "tasks": ("Task rubric", "Engineering rules", "scenario_context"),
}
DOCUMENT_MARK = "[document] "  # starts each document inside a context block
_TAG_OF_KIND = {"governance": "governance", "rubric": "rubric", "scenario_context": "scenario_context"}


def _json(value: Any) -> str:
    # One line: the C encoder (an indent forces the pure-Python one, ~10x slower) and fewer tokens.
    return json.dumps(value, ensure_ascii=False)


def select_blocks(stage: str | Sequence[str], blocks: Sequence[Mapping[str, str]]) -> list[dict[str, str]]:
    """The context blocks a stage sees (a stage's name, or the kinds and titles it reads), each cut
    to the prompt limit."""
    wanted = ROLE_CONTEXT[stage] if isinstance(stage, str) else tuple(stage)
    return [
        {"kind": b["kind"], "title": b["title"], "markdown": cut_for_prompt(b["markdown"], PROMPT_CHARS)}
        for b in blocks
        if b["kind"] in wanted or b["title"] in wanted
    ]


def render_blocks(blocks: Sequence[Mapping[str, str]]) -> str:
    """Blocks grouped in a tag named after their kind; each document starts with its title mark."""
    chosen: dict[str, list[str]] = {}
    for block in blocks:
        chosen.setdefault(_TAG_OF_KIND[block["kind"]], []).append(f"{DOCUMENT_MARK}{block['title']}\n{block['markdown']}")
    return "\n".join(
        f"<{tag}>\n{cut_for_prompt(chr(10).join(parts), PROMPT_CHARS)}\n</{tag}>" for tag, parts in chosen.items()
    )


def _cut(requirement: str) -> str:
    return cut_for_prompt(requirement, PROMPT_CHARS)


def _requirement(text: str) -> str:
    return f"<requirement>\n{_cut(text)}\n</requirement>"


CHAIN_PREAMBLE = """You are one role in a controlled delivery chain: a requirement becomes an implementation \
plan, a task breakdown and independent reviews; the runtime, not a model, decides every status. The \
inputs of this call come first: the requirement and the artifacts so far, then the documents and \
inputs of your role, and last your role and the answer it must give."""


def chain_system() -> SystemMessage:
    """The system message every delivery call starts with, the same for every role of every run."""
    return SystemMessage(content=CHAIN_PREAMBLE)


def _run_inputs(requirement: str, context: Sequence[Mapping[str, str]]) -> list[str]:
    """What the calls of one run share, first after the system message: the requirement and the
    scenario's own context (where the role reads it)."""
    scenario = [b for b in context if b["kind"] == "scenario_context"]
    return [_requirement(requirement), render_blocks(scenario)]


def _role_documents(context: Sequence[Mapping[str, str]]) -> str:
    """The governance and rubric documents this role reads (each role sees only its own: the planner
    is not shown the boundaries its plan is reviewed against), after what the run's calls share."""
    return render_blocks([b for b in context if b["kind"] != "scenario_context"])


def _role(instruction: str) -> str:
    return f"<your_role>\n{instruction}\n</your_role>"


def _chain_prompt(parts: Sequence[str], instruction: str, inputs: Mapping[str, Any],
                  after: Sequence[BaseMessage] = ()) -> Prompt:
    body = "\n".join(p for p in (*parts, _role(instruction)) if p)
    return Prompt([chain_system(), HumanMessage(content=body), *after], inputs)


# ---------------------------------------------------------------------------------- supervisor

# The branch is the answer's first field and the one decision: the wording makes "execute" the usual
# answer and names the two exceptions by what the runtime itself checks (a requirement with no concrete
# behaviour; one that asks to switch off the chain's own controls), because "specific enough to plan"
# made a small model ask for clarification on a clear requirement, then spend hundreds of tokens on it.
SUPERVISOR_PRE = """You are the supervisor of a controlled delivery chain. Decide ONE branch; write "branch" first.
- "execute" (the usual answer): the requirement states at least one concrete behaviour to build. Details
  it leaves open are not a reason to ask: write them as assumptions. Give assumptions (at most 3),
  planning_focus, task_focus, review_focus {{{roles}}}, reviewer_roles ({roles}) and
  stage_intents (exactly one each for plan, tasks, review).
- "clarification_required" only when it states no concrete behaviour at all (a wish such as "make it
  better"): missing_information, next_step, reason.
- "blocked" only when the requirement itself asks to disable or bypass the chain's own reviews, policy
  or guardrails (the governance's out-of-remit list): boundary_evidence, next_step, reason. Every other
  boundary is judged later by the reviewers.
Every text field is one short sentence. Answer with one JSON object with only the fields of the chosen
branch."""


def supervisor_pre_messages(
    requirement: str, blocks: Sequence[Mapping[str, str]], reviewers: Reviewers = DEFAULT_REVIEWERS
) -> list[BaseMessage]:
    context = select_blocks("supervisor", blocks)
    return _chain_prompt([*_run_inputs(requirement, context), _role_documents(context)],
                         SUPERVISOR_PRE.format(roles=", ".join(reviewers.roles)),
                         {"requirement": _cut(requirement), "context": context})


SUPERVISOR_POST = """You are the supervisor after review. Give short guidance for revising the
artifacts named by the findings: a rationale and 1-2 recommendations (target plan|tasks, summary,
required_actions, acceptance_suggestion). The runtime decides whether and what to revise; your
guidance only words the request."""


def supervisor_post_messages(requirement: str, bundle: Mapping[str, Any],
                             blocks: Sequence[Mapping[str, str]] = ()) -> list[BaseMessage]:
    findings = [
        {k: f[k] for k in ("finding_id", "description", "severity", "finding_type", "requirement",
                           "suggested_action", "target_artifacts")}
        for f in bundle["findings"]
    ]
    coverage = {"status": bundle["status"], "coverage": bundle["coverage"]}
    return _chain_prompt([
        *_run_inputs(requirement, select_blocks("supervisor", blocks)), f"<review_status>\n{_json(coverage)}\n</review_status>",
        f"<findings>\n{_json(findings)}\n</findings>",
    ], SUPERVISOR_POST, {"requirement": _cut(requirement), "review_status": coverage, "findings": findings})


# ---------------------------------------------------------------------------------- manager

MANAGER_SYSTEM = """You are the manager of a controlled delivery chain. You delegate by calling
sub-agent tools; the runtime supplies each sub-agent's inputs, so pass at most a short note.
Order: plan-subagent, then task-subagent, then {review_tools}
together in one turn. One call per turn outside the review group. Every turn must call a tool.
Calls outside these rules are refused and end the run."""


MANAGER_REASK = (
    "Your previous answer was refused by the delegation policy and did not run. "
    "Problems as [{{path, code}}]: {issues}. "
    "Call the offered sub-agent(s) again, fixing exactly these problems."
)


def manager_messages(
    pre_decision: Mapping[str, Any], artifacts: Sequence[str], executed: Sequence[str],
    reviewers: Reviewers = DEFAULT_REVIEWERS, refused: Sequence[Mapping[str, str]] = (),
) -> list[BaseMessage]:
    """The manager's turn; ``refused``: the ``{path, code}`` issues of this turn's refused answer,
    told to the model on the re-ask (never the refused answer itself), after the turn's own prompt so
    the re-ask's start is the refused turn's prompt byte for byte."""
    intents = {i["stage"]: i["objective"] for i in pre_decision.get("stage_intents", [])}
    inputs = {"stage_intents": intents, "artifacts": list(artifacts), "executed": list(executed)}
    reask = [HumanMessage(content=MANAGER_REASK.format(issues=_json([dict(i) for i in refused])))] if refused else []
    return _chain_prompt([
        f"<stage_intents>\n{_json(intents)}\n</stage_intents>",
        f"<artifacts>\n{chr(10).join(artifacts) or 'none'}\n</artifacts>",
        f"<executed>\n{', '.join(executed) or 'none'}\n</executed>",
    ], MANAGER_SYSTEM.format(review_tools=listed(reviewers.tools)) + "\nCall the next sub-agent(s).", inputs,
        after=reask)


# ---------------------------------------------------------------------------------- workers

WORKER_SYSTEM = """You are the {id} of a controlled delivery chain.
{instruction}
Non-goals: {non_goals}.
Keep it short: each text field one sentence, lists only as long as the requirement needs, markdown a
brief readable version (the runtime reads the structured fields, never the prose).
Answer with one JSON object that satisfies the schema exactly; no extra fields."""


def worker_messages(
    definition: SubagentToolDefinition,
    stage: str | Sequence[str],
    requirement: str,
    blocks: Sequence[Mapping[str, str]],
    *,
    constraints: Sequence[str] = (),
    plan: Mapping[str, Any] | None = None,
    tasks: Mapping[str, Any] | None = None,
    note: str = "",
    extra: str = "",
) -> list[BaseMessage]:
    """A sub-agent's prompt, assembled by the runtime from artifacts (the manager only adds a note).

    The input is first built as a strict ``SubagentInput``: bounded constraints and context blocks,
    and the artifact kinds handed over — which must include every kind the sub-agent declares."""
    worker_input = SubagentInput(
        instruction=definition.role_instruction,
        constraints=[c for c in constraints if c][:20],
        context_blocks=select_blocks(stage, blocks),
        input_artifacts=[kind for kind, value in (("plan", plan), ("tasks", tasks)) if value is not None],
    )
    missing = set(definition.input_artifact_kinds) - set(worker_input.input_artifacts)
    if missing:  # the delegation policy already refuses this; never build such an input anyway
        raise ValueError(f"{definition.id} needs {', '.join(sorted(missing))}")
    context = [b.model_dump() for b in worker_input.context_blocks]
    inputs: dict[str, Any] = {"requirement": _cut(requirement), "context": context, "plan": plan, "tasks": tasks,
                              "constraints": list(worker_input.constraints), "manager_note": note}
    # the run's artifacts before this call's own constraints: reviewers share all up to their focus
    parts = _run_inputs(requirement, context)
    if plan is not None:
        parts.append(f"<plan>\n{_json(plan)}\n</plan>")
    if tasks is not None:
        parts.append(f"<tasks>\n{_json(tasks)}\n</tasks>")
    parts.append(_role_documents(context))
    if worker_input.constraints:
        parts.append("<constraints>\n" + "\n".join(f"- {c}" for c in worker_input.constraints) + "\n</constraints>")
    if note:
        parts.append(f"<manager_note>\n{note}\n</manager_note>")
    if extra:
        parts.append(extra)
        inputs.update(getattr(extra, "inputs", {}))
    role = WORKER_SYSTEM.format(
        id=definition.id, instruction=definition.role_instruction, non_goals="; ".join(definition.non_goals),
    )
    return _chain_prompt(parts, role, inputs)


def revision_block(findings: Sequence[Mapping[str, Any]], request: Mapping[str, Any]) -> Tagged:
    request_view = {k: request[k] for k in ("summary", "required_actions")}
    findings_view = [
        {k: f[k] for k in ("finding_id", "description", "evidence", "severity", "suggested_action")}
        for f in findings
    ]
    return Tagged(
        "Revise the artifact once so it resolves these findings; keep everything else stable.\n"
        f"<revision_request>\n{_json(request_view)}\n</revision_request>\n"
        f"<findings>\n{_json(findings_view)}\n</findings>",
        {"revision_request": request_view, "findings": findings_view},
    )


# ---------------------------------------------------------------------------------- polish

POLISH_SYSTEM = """Rewrite the summary of a delivery report as two or three plain sentences for a
reader. Keep every fact; add none; do not mention a status other than the one given. Plain prose
only (no headings, lists, tables or code)."""


def polish_messages(status: str, summary: str) -> list[BaseMessage]:
    return Prompt([
        SystemMessage(content=POLISH_SYSTEM),
        HumanMessage(content=f"<status>\n{status}\n</status>\n<summary>\n{summary}\n</summary>"),
    ], {"status": status, "summary": summary})
