"""``reins doctor``: which provider serves each role, contract mode, docs root, checkpointer."""

from __future__ import annotations

import argparse
import json

from runtime.settings import ROLES, Settings


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("doctor", help="show how Reins is configured (never prints secrets)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
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
    }


def run(args: argparse.Namespace) -> int:
    report = describe(Settings.from_env())
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print("Reins configuration")
    for role, label in report["roles"].items():
        print(f"  {role:<11} {label}")
    for key in ("endpoint", "api_key", "contract_mode", "structured_method", "tool_choice", "max_tokens_param",
                "docs_root", "governance", "checkpointer"):
        print(f"  {key:<17} {report[key]}")
    print(f"  http_allowlist    {', '.join(report['http_allowlist']) or '(none)'}")
    return 0
