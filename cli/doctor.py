"""``reins doctor``: which provider serves each role, contract mode, tool-choice style, docs root,
checkpointer; ``--check`` also makes tiny requests to every configured model (see ``runtime.probe``)."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from policies.redaction import redact
from cli.errors import EXIT_FAILED

from runtime.settings import ROLES, Settings


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("doctor", help="show how Reins is configured (never prints secrets)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--check", action="store_true",
                        help="make two tiny requests per configured model: reachable, key, model, tool calling, JSON output")
    parser.set_defaults(handler=run)


def describe(settings: Settings) -> dict:
    from runtime.models import model_set_from_settings

    models = model_set_from_settings(settings)
    return {
        "roles": {role: models.label(role) for role in ROLES},
        "endpoint": "custom (OPENAI_BASE_URL)" if settings.base_url else "default OpenAI endpoint",
        "api_key": "set" if settings.api_key else "not set",
        "contract_mode": settings.contract_mode,
        "structured_method": settings.structured_method,
        "tool_choice": settings.tool_choice,
        "max_tokens_param": settings.max_tokens_param,
        "docs_root": "bundled" if settings.docs_root == Settings().docs_root else "REINS_DOCS_ROOT",
        "governance": "REINS_GOVERNANCE_ROOT" if settings.governance_root else "bundled",
        "checkpointer": settings.checkpoint,
        "http_allowlist": list(settings.http_allowlist),
        "skills": describe_skills(),
    }


def describe_skills() -> dict:
    """Which skills the assistant lists, and each one left out with its reason."""
    from runtime.resources import ResourceError
    from runtime.skills import load_catalog

    try:
        catalog, problem = load_catalog(), None
    except ResourceError as error:  # a bad REINS_SKILLS_ROOT: the bundled skills still load
        catalog, problem = load_catalog(user_skills=False), str(error)
    left_out = [{"where": item.where, "reason": redact(item.reason, 200)} for item in catalog.left_out]
    if problem:
        left_out.insert(0, {"where": "REINS_SKILLS_ROOT", "reason": redact(problem, 200)})
    return {"loaded": [f"{s.origin}/{s.name}" for s in catalog.skills], "left_out": left_out}


TOOL_CHOICE_HELP = {
    "required": 'tool_choice "required" (OpenAI, DeepSeek, vLLM, llama.cpp)',
    "named": "the single allowed tool by name (OpenAI, DeepSeek, vLLM)",
    "auto": "left to the model (any server; a turn without a tool call is refused)",
}


def run(args: argparse.Namespace) -> int:
    from runtime.probe import configured_models, probe_model

    settings = Settings.from_env()
    report = describe(settings)
    checks = [probe_model(name, settings) for name in configured_models(settings)] if args.check else None
    code = EXIT_FAILED if checks and not all(check.ok for check in checks) else 0
    if checks is not None:
        report["checks"] = [{**asdict(check), "model": redact(check.model, 120)} for check in checks]
    if args.json:
        print(json.dumps(report, indent=2))
        return code
    print("Reins configuration")
    for role, label in report["roles"].items():
        print(f"  {role:<11} {label}")
    for key in ("endpoint", "api_key", "contract_mode", "structured_method", "tool_choice", "max_tokens_param",
                "docs_root", "governance", "checkpointer"):
        print(f"  {key:<17} {report[key]}")
    print(f"  http_allowlist    {', '.join(report['http_allowlist']) or '(none)'}")
    print(f"  skills            {', '.join(report['skills']['loaded']) or '(none)'}")
    for item in report["skills"]["left_out"]:
        print(f"  skill left out    {item['where']}: {item['reason']}")
    print(f"  (REINS_TOOL_CHOICE={settings.tool_choice}: tool calls are asked for with "
          f"{TOOL_CHOICE_HELP[settings.tool_choice]})")
    if checks is not None:
        if not checks:
            print("  check             no model configured: the offline stand-in needs no endpoint")
        for check in checks:
            print(f"  check {redact(check.model, 80)}: {'ok' if check.ok else 'FAILED'} - {redact(check.result, 200)}")
    return code
