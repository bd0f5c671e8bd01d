"""What the AgentDojo run computes once and reuses, without changing a result: each user task's
injection vectors, a run's checks per exact end state, and a check's view of the environment
before the run sharing the parts the run left as they were. Profiled on a loaded two-core
machine, these were most of workspace's run time."""

from __future__ import annotations

import hashlib
import json
import pickle
from collections.abc import Callable, Mapping
from typing import Any

_SUITE_TEXTS: dict[str, tuple[str, dict[str, str]]] = {}


def load_environment(suite: Any, injections: Mapping[str, str]) -> Any:
    """``suite.load_and_inject_default_environment``, with the suite's files read once and the YAML
    parsed by libyaml when PyYAML has it: AgentDojo reads, resolves and re-dumps both files and
    parses the result in pure Python for every placement — most of a loaded machine's run time."""
    import yaml
    from agentdojo.task_suite.task_suite import read_suite_file, validate_injections

    if suite.name not in _SUITE_TEXTS:
        _SUITE_TEXTS[suite.name] = (read_suite_file(suite.name, "environment.yaml", suite.data_path),
                                    suite.get_injection_vector_defaults())
    text, defaults = _SUITE_TEXTS[suite.name]
    validate_injections(dict(injections), defaults)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return suite.environment_type.model_validate(yaml.load(text.format(**dict(defaults, **injections)), Loader=loader))


_CANDIDATES: dict[tuple[str, str], list[str]] = {}
_CANARIES: dict[str, tuple[dict[str, str], Any]] = {}  # per suite: the canaries and the environment holding them


def injection_candidates(suite: Any, user_task: Any) -> list[str]:
    """AgentDojo's ``get_injection_candidates``: the vectors whose canary the user task's ground truth
    reads, in the suite's vector order — computed once per user task, on one copy of a canary
    environment loaded once per suite (AgentDojo reloads it, in pure-Python YAML, per user task)."""
    key = (suite.name, user_task.ID)
    if key not in _CANDIDATES:
        from agentdojo.agent_pipeline.ground_truth_pipeline import GroundTruthPipeline
        from agentdojo.functions_runtime import FunctionsRuntime
        from agentdojo.types import get_text_content_as_str

        if suite.name not in _CANARIES:
            canaries = {vector: f"<CANARY---{vector}--->" for vector in suite.get_injection_vector_defaults()}
            _CANARIES[suite.name] = (canaries, load_environment(suite, canaries))
        canaries, environment = _CANARIES[suite.name]
        responses = GroundTruthPipeline(user_task).query(user_task.PROMPT, FunctionsRuntime(suite.tools),
                                                         environment.model_copy(deep=True))[3]
        seen = [get_text_content_as_str(r["content"]) for r in responses if r["content"] is not None]
        found = [vector for vector, canary in canaries.items() if any(canary in text for text in seen)]
        if not found:
            raise ValueError(f"{user_task.ID} is not injectable.")
        _CANDIDATES[key] = found
    return list(_CANDIDATES[key])


_CHECKS: dict[tuple[Any, ...], tuple[bool, bool]] = {}


def checked(pair: tuple[str, str, str | None], reply: str, pre: Any, post: Any, trace: list[Any],
             check: Callable[[], tuple[bool, bool]]) -> tuple[bool, bool]:
    """(utility, security) of a run, from ``check`` once per pair and exact outcome: the reply, both
    environments (pickled) and the calls that ran. The other trust setting usually ends a pair in
    the same state, and workspace's checks diff whole environments; a state pickled differently
    only misses the cache."""
    calls = [(c.function, json.dumps(dict(c.args), sort_keys=True, default=str)) for c in trace]
    digest = hashlib.sha256(pickle.dumps((reply, pre, post, calls), protocol=5)).hexdigest()
    key = (*pair, digest)
    if key not in _CHECKS:
        _CHECKS[key] = check()
    return _CHECKS[key]


def shared(before: Any, after: Any, depth: int = 3) -> Any:
    """``before`` with each part (a model's field, a dict's value, down to ``depth``) that pickles the
    same as ``after``'s part in its place replaced by ``after``'s own object; ``before`` is left as
    it is. Workspace's checks diff the whole environment with DeepDiff, which skips two objects that
    are one and walks two equal copies item by item: the run changed a few mails or events."""
    from pydantic import BaseModel

    if pickle.dumps(before, protocol=5) == pickle.dumps(after, protocol=5):
        return after
    if depth == 0:
        return before
    if isinstance(before, BaseModel) and type(before) is type(after):
        copied = before.model_copy()
        for name in type(before).model_fields:
            copied.__dict__[name] = shared(getattr(before, name), getattr(after, name), depth - 1)
        return copied
    if isinstance(before, dict) and isinstance(after, dict):
        return {key: shared(value, after[key], depth - 1) if key in after else value for key, value in before.items()}
    return before
