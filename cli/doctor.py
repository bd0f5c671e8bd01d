"""``reins doctor``: which provider serves each role, contract mode, tool-choice style, docs root,
checkpointer, the home for runs (``REINS_HOME``), the assistant's tools (its MCP servers with theirs,
each with whether it asks first; a server that cannot start in one line with its command and log,
and then a non-zero exit); ``--check`` also makes tiny requests to every configured model (see
``reins.runtime.llm.probe``)."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from reins.policies.text.redaction import redact
from reins.cli.errors import EXIT_BAD_INPUT, EXIT_FAILED, UserError

from reins.runtime.config.settings import ROLE_PARENTS, ROLES, VISION_ROLE, Settings


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("doctor", help="show how Reins is configured (never prints secrets)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--check", action="store_true",
                        help="make tiny requests per configured model (reachable, key, model, tool calling in each "
                             "tool-choice style, JSON output) and recommend the settings to export")
    parser.add_argument("--budget", action="store_true",
                        help="print each graph's worst case (model requests, output tokens, tool calls, seconds) "
                             "and check it against REINS_MAX_CALLS, REINS_MAX_OUTPUT_TOKENS, REINS_MAX_TOOL_CALLS, "
                             "REINS_MAX_SECONDS")
    parser.add_argument("--fuzz", type=int, metavar="N", default=None,
                        help="with --budget: N adversarial runs in all (most stage-composed on the real call "
                             "machinery, some full graph runs) checked against the bound; prints the tightness")
    parser.add_argument("--guards", action="store_true",
                        help="prove every path from a model's output to an action passes a policy decision "
                             "(the three graphs, subgraphs included) and print the paths checked")
    parser.set_defaults(handler=run)


def describe(settings: Settings) -> dict:
    from reins.cli.env_file import env_file_status
    from reins.runtime.persistence.home import reins_home
    from reins.runtime.llm.labels import entry_label, model_label

    return {
        "roles": {role: model_label(settings, role) for role in ROLES},
        "fallbacks": {role: [entry_label(n) for n in settings.fallbacks_for(role) if n != settings.model_for(role)]
                      for role in ROLES if settings.model_for(role) and settings.fallbacks_for(role)},
        # where a request the role's model keeps failing goes once (REINS_MODEL_ESCALATE[_<ROLE>])
        "escalations": {role: entry_label(name) for role in ROLES
                        if settings.model_for(role) and (name := settings.escalation_for(role))},
        "endpoint": "custom (OPENAI_BASE_URL)" if settings.base_url else "default OpenAI endpoint",
        "api_key": "set" if settings.api_key else "not set",
        # which roles have their own endpoint or key (REINS_BASE_URL_<ROLE>, REINS_API_KEY_<ROLE>); never the values
        "role_endpoints": sorted(settings.role_base_urls),
        "role_keys": sorted(settings.role_api_keys),
        "contract_mode": settings.contract_mode,
        "structured_method": settings.structured_method,
        "tool_choice": settings.tool_choice,
        "text_tool_calls": settings.text_tool_calls,
        "max_tokens_param": settings.max_tokens_param,
        "docs_root": "bundled" if settings.docs_root == Settings().docs_root else "REINS_DOCS_ROOT",
        "governance": "REINS_GOVERNANCE_ROOT" if settings.governance_root else "bundled",
        "checkpointer": settings.checkpoint,
        "home": str(reins_home()),
        "env_file": env_file_status(),
        "http_allowlist": list(settings.http_allowlist),
        "skills": describe_skills(),
        "assistant_roles": describe_assistant_roles(settings),
        "persona": describe_persona(),
        "flow_rules": describe_flow_rules(settings),
    }


def describe_flow_rules(settings: Settings) -> dict:
    """The data-flow rules in force: REINS_FLOW_RULES's file (or the bundled set) and how many
    rules it holds, or the one-line reason it is refused (naming the rule and field)."""
    from pathlib import Path

    from reins.runtime.tools.flow_rules import FlowRulesError, rules_in_force

    shown = Path(settings.flow_rules).name if settings.flow_rules else None
    try:
        rules = rules_in_force(None, settings.flow_rules)
    except FlowRulesError as error:
        return {"file": shown, "rules": 0, "problem": redact(str(error), 300)}
    return {"file": shown, "rules": len(rules), "problem": None}


def describe_assistant_roles(settings: Settings) -> dict:
    """The assistant's task roles and the vision role: each one's model (its own, or its parent's)
    and its escalation model."""
    from reins.runtime.llm.labels import entry_label, model_label

    roles = {}
    for role, parent in ROLE_PARENTS.items():
        own = role in settings.role_models
        escalation = settings.escalation_for(role) if settings.model_for(role) else None
        if role == VISION_ROLE and not own:
            model = "not configured (REINS_MODEL_VISION): a message with an image is refused"
        else:
            model = model_label(settings, role)
        source = "own" if own else (None if role == VISION_ROLE else parent)  # vision never borrows a model
        roles[role] = {"model": model, "from": source,
                       "escalation": entry_label(escalation) if escalation else None}
    return roles


def describe_persona() -> dict:
    """Whether a persona file is configured (REINS_ASSISTANT_PROMPT_FILE) and loads: its file name,
    how many examples, or the one-line reason it is refused."""
    from pathlib import Path

    from reins.runtime.config.persona import PersonaError, persona_file, read_persona_file

    path = persona_file()
    if not path:
        return {"file": None, "loaded": False, "problem": None}
    shown = Path(path).name
    try:
        persona = read_persona_file(path)
    except PersonaError as error:
        return {"file": shown, "loaded": False, "problem": redact(str(error), 200)}
    return {"file": shown, "loaded": True, "problem": None, "instructions": bool(persona["instructions"]),
            "examples": len(persona["examples"])}


def _persona_line(persona: dict) -> str:
    if not persona["file"]:
        return "none (REINS_ASSISTANT_PROMPT_FILE not set)"
    if not persona["loaded"]:
        return f"NOT loaded - {persona['problem']}"
    what = "instructions" if persona["instructions"] else "no instructions"
    return f"{persona['file']}: loaded ({what}, {persona['examples']} example(s))"


def describe_tools(settings: Settings) -> dict:
    """The chat tools with their approval traits, and each MCP server with its tools or its problem."""
    from reins.runtime.tools.mcp_config import McpConfigError
    from reins.runtime.tools.chat_tools import CHAT_SCOPE
    from reins.runtime.tools.mcp_tools import load_mcp_tools
    from reins.runtime.tools.toolbox import default_registry

    builtins = default_registry().for_scope(CHAT_SCOPE)
    report: dict = {"chat_tools": [{"name": t.name, "approval": t.trait} for t in builtins], "mcp_servers": []}
    try:  # the same load the assistant makes (cached): doctor shows what chat gets
        toolset = load_mcp_tools(settings.mcp_config, scope=CHAT_SCOPE, reserved=builtins.names)
    except McpConfigError as error:
        report["mcp_error"] = redact(str(error), 300)
        return report
    report["mcp_servers"] = [
        {"name": s.name, "transport": s.transport, "problem": s.problem or None, "notes": list(s.notes),
         "command": s.command or None, "log": s.log or None,
         "tools": [{"name": name, "approval": approval} for name, approval in s.tools]}
        for s in toolset.servers
    ]
    report["mcp_disabled"] = list(toolset.disabled)
    report["mcp_notices"] = [redact(notice, 300) for notice in toolset.notices]
    return report


def _print_tools(report: dict) -> None:
    from reins.policies.tools.approval import approval_note

    tools = ", ".join(t["name"] + approval_note(t["approval"]) for t in report["chat_tools"])
    print(f"  chat_tools        {tools}")
    if report.get("mcp_error"):
        print(f"  mcp               configuration error: {report['mcp_error']}")
    for notice in report.get("mcp_notices", []):
        print(f"  mcp notice        {notice}")
    for name in report.get("mcp_disabled", []):
        print(f"  mcp {name:<13} disabled in the configuration (not started)")
    for server in report["mcp_servers"]:
        if server["problem"]:
            where = f"; command: {server['command']}" if server["command"] else ""
            where += f"; its output: {server['log']}" if server["log"] else ""
            print(f"  mcp {server['name']:<13} cannot start: {server['problem']}{where}")
            continue
        listed = ", ".join(t["name"] + approval_note(t["approval"]) for t in server["tools"])
        print(f"  mcp {server['name']:<13} {server['transport']}: {listed or '(no tools)'}")
        for note in server["notes"]:
            print(f"      {redact(note, 200)}")


def describe_skills() -> dict:
    """Which skills the assistant lists, and each one left out with its reason."""
    from reins.runtime.resources import ResourceError
    from reins.runtime.tools.skills import load_catalog

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
    if getattr(args, "fuzz", None) is not None and not getattr(args, "budget", False):
        raise UserError("--fuzz goes with --budget: reins doctor --budget --fuzz N")
    if getattr(args, "budget", False):
        from reins.cli.doctor_audit import run_budget

        return run_budget(args.json, getattr(args, "fuzz", None))
    if getattr(args, "guards", False):
        from reins.cli.doctor_audit import run_guards

        return run_guards(args.json)
    settings = Settings.from_env()
    report = {**describe(settings), **describe_tools(settings)}
    checks = None
    if args.check:  # only the probes need the provider libraries
        from reins.runtime.llm.probe import configured_models, probe_model

        checks = [probe_model(name, settings, roles) for name, roles in configured_models(settings)]
    code = EXIT_FAILED if checks and not all(check.ok for check in checks) else 0
    if any(server["problem"] for server in report["mcp_servers"]):  # a configured server cannot start
        code = code or EXIT_FAILED
    refused = report.get("mcp_error") or report["persona"]["problem"] or report["flow_rules"]["problem"]
    code = EXIT_BAD_INPUT if refused else code
    if checks is not None:
        report["checks"] = [{**asdict(check), "model": redact(check.model, 120)} for check in checks]
    if args.json:
        print(json.dumps(report, indent=2))
        return code
    print("Reins configuration")
    for role, label in report["roles"].items():
        others = [f"then {', '.join(report['fallbacks'][role])}"] if role in report["fallbacks"] else []
        others += [f"escalates to {report['escalations'][role]}"] if role in report["escalations"] else []
        print(f"  {role:<11} {label}" + (f" ({'; '.join(others)})" if others else ""))
    for role, served in report["assistant_roles"].items():
        notes = [f"the {served['from']} role's"] if served["from"] not in ("own", None) else []
        notes += [f"escalates to {served['escalation']}"] if served["escalation"] else []
        print(f"  {role:<11} {served['model']}" + (f" ({'; '.join(notes)})" if notes else ""))
    print(f"  persona           {_persona_line(report['persona'])}")
    rules = report["flow_rules"]
    source = f"{rules['file']} (REINS_FLOW_RULES)" if rules["file"] else "bundled"
    print(f"  flow_rules        {source}: " + (f"REFUSED - {rules['problem']}" if rules["problem"]
                                              else f"{rules['rules']} rule(s)"))
    for key in ("endpoint", "api_key", "contract_mode", "structured_method", "tool_choice", "text_tool_calls",
                "max_tokens_param", "docs_root", "governance", "checkpointer", "home", "env_file"):
        print(f"  {key:<17} {report[key]}")
    print(f"  http_allowlist    {', '.join(report['http_allowlist']) or '(none)'}")
    for key in ("role_endpoints", "role_keys"):
        if report[key]:
            print(f"  {key:<17} own for {', '.join(report[key])}")
    _print_tools(report)
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
            for probe in check.probes:
                print(f"    {probe.line()}")
            if check.verdict:
                print(f"    tool calls: {check.verdict}")
            for line in check.schemas:
                print(f"    {redact(line, 300)}")
            if check.recommended:
                print("    recommended:")
                for line in check.recommended:
                    print(f"      {line}")
    return code
