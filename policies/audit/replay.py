"""Counterfactual replay's vocabulary (pure): a re-decided decision, a replayed run, and the policy
changes a replay is asked about (``--set RULE=VALUE``), read through one schema.

A change is one of:

==================================  ==========================================================
key                                 what it changes
==================================  ==========================================================
``<rule>`` / ``delegation.<rule>``  a whole-number or true/false field of ``DelegationPolicy``
``reviewers.drop=<role>``           the reviewer table without that reviewer
``reviewers.<role>.<verdict>=L``    what a reviewer's verdict means: ok | concern | blocker
``tasklist.<limit>=N``              a ``Limits`` field of the tasklist machine (``max_steps`` only lower)
``tools.trust=<tool>``              the user trusts the tool: it runs unasked unless data flow asks
``tools.untrust=<tool>``            the user's trust withdrawn: a tool that acts asks first
``contract.<contract>.<field>=N``   the length bound a contract's schema declares for a field
                                    (list items or characters); binds every contract of the schema
==================================  ==========================================================

Every bad change is one line naming the key; nothing here reads a file or a model.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from reins.policies.audit.contract_replay import Limit, bounded_fields, replay_contracts
from reins.policies.delivery.delegation import DEFAULT_POLICY, DelegationPolicy
from reins.policies.text.redaction import redact
from reins.policies.delivery.reviewers import DEFAULT_REVIEWERS, LEVELS, Reviewers
from reins.policies.tasklist.machine import Limits

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")


@dataclass(frozen=True)
class Decision:
    step: int  # the checkpoint's step, a turn, or the position of the decision in the run
    kind: str  # delegation | reask | review_status | revision | contract:<name> | tasklist.<action> | tool:<name>
    recorded: str
    replayed: str
    chat_turn: int | None = None  # the conversation turn of an assistant thread's decision

    @property
    def flipped(self) -> bool:
        return self.recorded != self.replayed


@dataclass
class Replay:
    thread_id: str
    decisions: list[Decision] = field(default_factory=list)
    recorded_status: str | None = None
    replayed_status: str | None = None  # the status the run would have ended with, when rules alone decide it
    stopped: str = ""  # why the replay could not go past the first flip
    graph: str = "delivery_chain"

    @property
    def first_flip(self) -> Decision | None:
        return next((d for d in self.decisions if d.flipped), None)

    @property
    def status_changed(self) -> bool:
        """A flip that rules alone carry to another final status."""
        return self.first_flip is not None and self.replayed_status not in (None, self.recorded_status)

    @property
    def needs_model(self) -> bool:
        """A flip whose outcome only a new model call could tell."""
        return self.first_flip is not None and self.replayed_status is None

    def as_dict(self) -> dict[str, Any]:
        flip = self.first_flip
        return {"thread_id": self.thread_id, "graph": self.graph, "decisions": len(self.decisions),
                "recorded_status": self.recorded_status, "replayed_status": self.replayed_status,
                "first_flip": asdict(flip) if flip else None, "stopped": self.stopped}


def figures(replays: Iterable[Replay]) -> dict[str, int]:
    """What a replay prints: runs replayed, decisions re-decided, runs that flip, of those the ones
    whose status changes and the ones only a new model call could finish."""
    runs = list(replays)
    return {"runs": len(runs), "decisions": sum(len(r.decisions) for r in runs),
            "flipped": sum(1 for r in runs if r.first_flip), "status_changes": sum(1 for r in runs if r.status_changed),
            "needs_model": sum(1 for r in runs if r.needs_model)}


@dataclass(frozen=True)
class Overrides:
    """The policy a replay re-decides with: the defaults, changed by ``--set``."""

    delegation: DelegationPolicy = DEFAULT_POLICY
    reviewers: Reviewers = DEFAULT_REVIEWERS
    tasklist: tuple[tuple[str, int], ...] = ()  # Limits fields to tighten, in the order given
    trust: frozenset[str] = frozenset()
    untrust: frozenset[str] = frozenset()
    contracts: tuple[Limit, ...] = ()  # (contract, field, max_length), in the order given

    def limits(self, recorded: Limits) -> Limits:
        """A run's recorded limits with the changes (the step budget only ever lowered, as the machine's is)."""
        return dataclasses.replace(recorded, **{name: min(value, getattr(recorded, name)) if name == "max_steps"
                                                else value for name, value in self.tasklist})


DEFAULT_OVERRIDES = Overrides()


class OverrideError(ValueError):
    """A ``--set`` change the schema refuses (one line)."""


def _delegation_rules() -> dict[str, type]:
    return {f.name: (bool if f.type in ("bool", bool) else int) for f in dataclasses.fields(DelegationPolicy)
            if f.type in ("int", "bool", int, bool)}


def _number(key: str, text: str) -> int:
    if not text.isdigit() or len(text) > 6:
        raise OverrideError(f"--set {key}: a whole number, 0 or more")
    return int(text)


def parse_overrides(changes: Iterable[str], base: Overrides = DEFAULT_OVERRIDES) -> Overrides:
    """``RULE=VALUE`` changes over ``base``, in order; the first bad one raises ``OverrideError``.

    Example: ``replay_thread("delivery_chain", result, "t1", result["run_status"], parse_overrides(["max_tool_calls=4"]))``
    """
    result = base
    rules = _delegation_rules()
    for change in changes:
        key, equals, value = (part.strip() for part in str(change).partition("="))
        shown = redact(key, 60)
        if not equals or not key:
            raise OverrideError(f"--set {shown or '?'}: give RULE=VALUE")
        head, _, rest = key.partition(".")
        if key in rules or (head == "delegation" and rest in rules):
            rule = rest if head == "delegation" else key
            result = dataclasses.replace(result, delegation=_delegation_change(result.delegation, rule,
                                                                              rules[rule], value.lower()))
        elif head == "reviewers":
            result = dataclasses.replace(result, reviewers=_reviewer_change(result.reviewers, rest, value, shown))
        elif head == "tasklist":
            limits = {f.name for f in dataclasses.fields(Limits)}
            if rest not in limits:
                raise OverrideError(f"--set {shown}: not a tasklist limit; one of {', '.join(sorted(limits))}")
            result = dataclasses.replace(result, tasklist=(*result.tasklist, (rest, _number(key, value))))
        elif key in ("tools.trust", "tools.untrust"):
            if not _TOOL_NAME.match(value):
                raise OverrideError(f"--set {key}: a tool name (letters, digits, _ . -)")
            trust, untrust = set(result.trust), set(result.untrust)
            (trust if rest == "trust" else untrust).add(value)
            (untrust if rest == "trust" else trust).discard(value)
            result = dataclasses.replace(result, trust=frozenset(trust), untrust=frozenset(untrust))
        elif head == "contract":
            result = dataclasses.replace(result, contracts=(*result.contracts, _contract_limit(rest, value, shown)))
        else:
            raise OverrideError(f"--set {shown}: unknown rule; a delegation rule ({', '.join(sorted(rules))}), "
                                "reviewers.drop, reviewers.<role>.<verdict>, tasklist.<limit>, tools.trust, tools.untrust "
                                "or contract.<contract>.<field>")
    return result


def _contract_limit(rest: str, value: str, shown: str) -> Limit:
    contract, _, name = rest.rpartition(".")
    if contract not in replay_contracts():
        raise OverrideError(f"--set {shown}: contract.<contract>.<field>; contracts: {', '.join(replay_contracts())}")
    fields = bounded_fields(contract)
    if name not in fields:
        raise OverrideError(f"--set {shown}: not a bounded field of {contract}; one of {', '.join(fields) or 'none'}")
    return contract, name, _number(f"contract.{rest}", value)


def _delegation_change(policy: DelegationPolicy, rule: str, kind: type, value: str) -> DelegationPolicy:
    if kind is bool:
        if value not in ("true", "false"):
            raise OverrideError(f"--set {rule}: true or false")
        return dataclasses.replace(policy, **{rule: value == "true"})
    return dataclasses.replace(policy, **{rule: _number(rule, value)})


def _reviewer_change(table: Reviewers, rest: str, value: str, shown: str) -> Reviewers:
    if rest == "drop":
        if value not in table.roles:
            raise OverrideError(f"--set reviewers.drop: one of {', '.join(table.roles)}")
        if len(table) == 1:
            raise OverrideError("--set reviewers.drop: the delivery chain needs at least one reviewer")
        return Reviewers(tuple(spec for spec in table if spec.role != value))
    role, _, verdict = rest.partition(".")
    if role not in table.roles:
        raise OverrideError(f"--set {shown}: reviewers.drop or reviewers.<role>.<verdict>; roles: {', '.join(table.roles)}")
    spec = table.of_role(role)
    if verdict not in spec.levels:
        raise OverrideError(f"--set {shown}: {role}'s verdicts are {', '.join(spec.levels)}")
    if value not in LEVELS:
        raise OverrideError(f"--set {shown}: one of {', '.join(LEVELS)}")
    try:
        changed = dataclasses.replace(spec, levels={**spec.levels, verdict: value})
    except ValueError as error:
        raise OverrideError(f"--set {shown}: {str(error).split(': ', 1)[-1]}") from None
    return Reviewers(tuple(changed if s.role == role else s for s in table))
