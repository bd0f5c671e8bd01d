"""``reins doctor``: which provider serves each role, contract mode, tool-choice style, docs root,
checkpointer, the home for runs (``REINS_HOME``); ``--check`` also makes tiny requests to every configured model (see ``runtime.probe``)."""

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
    from cli.env_file import env_file_status
    from runtime.home import reins_home
    from runtime.labels import model_label

    return {
        "roles": {role: model_label(settings, role) for role in ROLES},
        "endpoint": "custom (OPENAI_BASE_URL)" if settings.base_url else "default OpenAI endpoint",
        "api_key": "set" if settings.api_key else "not set",
        "contract_mode": settings.contract_mode,
        "structured_method": settings.structured_method,
        "tool_choice": settings.tool_choice,
        "max_tokens_param": settings.max_tokens_param,
        "docs_root": "bundled" if settings.docs_root == Settings().docs_root else "REINS_DOCS_ROOT",
        "governance": "REINS_GOVERNANCE_ROOT" if settings.governance_root else "bundled",
        "checkpointer": settings.checkpoint,
        "home": str(reins_home()),
        "env_file": env_file_status(),
        "http_allowlist": list(settings.http_allowlist),
    }


TOOL_CHOICE_HELP = {
    "required": 'tool_choice "required" (OpenAI, DeepSeek, vLLM, llama.cpp)',
    "named": "the single allowed tool by name (OpenAI, DeepSeek, vLLM)",
    "auto": "left to the model (any server; a turn without a tool call is refused)",
}


def run(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    report = describe(settings)
    checks = None
    if args.check:  # only the probes need the provider libraries
        from runtime.probe import configured_models, probe_model

        checks = [probe_model(name, settings) for name in configured_models(settings)]
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
                "docs_root", "governance", "checkpointer", "home", "env_file"):
        print(f"  {key:<17} {report[key]}")
    print(f"  http_allowlist    {', '.join(report['http_allowlist']) or '(none)'}")
    print(f"  (REINS_TOOL_CHOICE={settings.tool_choice}: tool calls are asked for with "
          f"{TOOL_CHOICE_HELP[settings.tool_choice]})")
    if checks is not None:
        if not checks:
            print("  check             no model configured: the offline stand-in needs no endpoint")
        for check in checks:
            print(f"  check {redact(check.model, 80)}: {'ok' if check.ok else 'FAILED'} - {redact(check.result, 200)}")
    return code
