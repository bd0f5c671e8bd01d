"""``reins doctor --check`` against the loopback stub: one line per model, non-zero on failure."""

from __future__ import annotations

import json
import time

import pytest

from reins.cli import main
from tests.wire.behaviours import cooperative, kind_of, text_only, tool_names
from tests.wire.conftest import KEY
from tests.wire.provider_stub import Completion, HttpError, closed_port


def _doctor(capsys, *flags: str) -> tuple[int, str]:
    code = main(["doctor", "--check", *flags])
    captured = capsys.readouterr()
    assert KEY not in captured.out + captured.err and "Traceback" not in captured.err
    return code, captured.out


def test_a_working_endpoint_passes_with_a_tool_call_per_style_and_one_structured_request(stub, fast_cli, capsys, monkeypatch):
    provider = stub(cooperative)
    fast_cli(provider.base_url)
    monkeypatch.setenv("REINS_MODEL_REVIEWER", "stub-reviewer")

    code, out = _doctor(capsys)

    assert code == 0
    assert "check stub-model: ok - reachable; tool calling and json_schema output work" in out
    assert "check stub-reviewer: ok" in out
    bodies = provider.bodies()
    # per distinct model: the ping call in each style (the configured one first), one structured
    # answer, then every real contract schema of the roles it serves, as a run sends it
    by_model = {name: [kind_of(b) for b in bodies if b["model"] == name] for name in ("stub-model", "stub-reviewer")}
    assert by_model["stub-reviewer"] == ["tools:ping", "tools:ping", "Ping", "GeneralReview", "RiskReview",
                                         "BoundaryReview"]
    assert by_model["stub-model"][:3] == ["tools:ping", "tools:ping", "Ping"]
    assert {"PlanningDecision", "DeliveryPlan", "AssistantAnswer", "SupervisorPostGuidance"} <= set(by_model["stub-model"])
    assert "GeneralReview" not in by_model["stub-model"]  # the reviewer role has its own model
    assert [b.get("tool_choice") for b in bodies[:2]] == ["required", "auto"]
    assert bodies[0]["max_tokens"] == 256
    answer = next(b for b in bodies if kind_of(b) == "AssistantAnswer")
    assert answer["max_tokens"] == 16
    assert "maxLength" not in answer["response_format"]["json_schema"]["schema"]["properties"]["summary"]
    assert "tool calls: native" in out
    assert "tool_choice required: native tool call" in out and "tool_choice auto: native tool call" in out
    assert "export REINS_TOOL_CHOICE=required" in out


@pytest.mark.parametrize(
    ("answer", "verdict"),
    [
        (lambda body: HttpError(401, f"Incorrect API key provided: {KEY}"), "auth failed (HTTP 401)"),
        (lambda body: HttpError(404, "The model `stub-model` does not exist"), "model not found"),
        (text_only, "no tool calling in any tool-choice style: point REINS_MODEL_MANAGER at a model that calls tools"),
        (lambda body: Completion(content="ok!") if body.get("response_format") else cooperative(body),
         "no JSON-schema output (REINS_STRUCTURED_METHOD=json_schema)"),
    ],
    ids=["auth", "model", "no-tools", "no-json"],
)
def test_each_failure_is_one_named_line_and_a_non_zero_exit(stub, fast_cli, capsys, answer, verdict):
    provider = stub(answer)
    fast_cli(provider.base_url)
    code, out = _doctor(capsys)
    assert code == 4
    assert f"check stub-model: FAILED - {verdict}" in out


def test_an_unreachable_endpoint_is_reported_as_such(fast_cli, capsys):
    fast_cli(f"http://127.0.0.1:{closed_port()}/v1")
    code, out = _doctor(capsys, "--json")
    assert code == 4
    assert json.loads(out)["checks"] == [{"model": "stub-model", "ok": False, "result": "unreachable (connection refused)",
                                          "probes": [], "recommended": [], "verdict": "", "schemas": []}]


def test_without_a_model_there_is_nothing_to_check(capsys, monkeypatch):
    for name in ("REINS_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    code = main(["doctor", "--check"])
    assert code == 0
    assert "no model configured" in capsys.readouterr().out


def test_every_fallback_is_checked_too(stub, fast_cli, capsys, monkeypatch):
    provider = stub(lambda body: HttpError(404, "no such model") if body["model"] == "gone" else cooperative(body))
    fast_cli(provider.base_url)
    monkeypatch.setenv("REINS_MODEL_FALLBACK", "gone,backup")

    code, out = _doctor(capsys)

    assert code != 0
    assert "check stub-model: ok" in out and "check backup: ok" in out
    assert "check gone: FAILED - model not found" in out
    assert "(then openai-compatible:gone, openai-compatible:backup)" in out
    assert sorted({b["model"] for b in provider.bodies()}) == ["backup", "gone", "stub-model"]


def test_doctor_names_the_roles_with_their_own_endpoint_and_key_but_never_the_key(clean_doctor_env, capsys):
    secret = "per-role-secret-value-0123"
    clean_doctor_env({"REINS_MODEL": "m", "REINS_BASE_URL_REVIEWER": "http://127.0.0.1:9/v1", "REINS_API_KEY_REVIEWER": secret})
    assert main(["doctor", "--json"]) == 0
    out = capsys.readouterr().out
    report = json.loads(out)
    assert report["role_endpoints"] == ["reviewer"] and report["role_keys"] == ["reviewer"]
    assert secret not in out
def llama_cpp_qwen(body):
    """As llama-server answered doctor's ping with Qwen2.5-Coder-0.5B: the call as text, padded to
    the bound under "required" (256 tokens, finish_reason length), clean under "auto"."""
    if tool_names(body) == ["ping"]:
        call = '{"name": "ping", "arguments": {"ok": true}}'
        if body.get("tool_choice") == "auto":
            return Completion(content=call)
        return Completion(content=call + "." + "0" * 900, finish_reason="length")
    return cooperative(body)


def test_a_model_that_writes_calls_as_text_gets_the_settings_to_export(stub, fast_cli, capsys):
    provider = stub(llama_cpp_qwen)
    fast_cli(provider.base_url)

    code, out = _doctor(capsys)

    assert code == 0  # recovered under the default REINS_TEXT_TOOL_CALLS=recover
    assert "check stub-model: ok - reachable; tool calls written as text (recovered) and json_schema output work" in out
    assert "tool_choice required: tool call written as text" in out and "ran to the output bound" in out
    assert "tool_choice auto: tool call written as text" in out
    lines = [line.strip() for line in out.splitlines()]
    exports = lines[lines.index("recommended:") + 1:]
    assert exports[:2] == ["export REINS_TOOL_CHOICE=auto", "export REINS_TEXT_TOOL_CALLS=recover"]
    assert exports[2].startswith("export REINS_MAX_TOKENS_MANAGER=")

    code, out = _doctor(capsys, "--json")
    (check,) = json.loads(out)["checks"]
    assert [(p["style"], p["call"], p["cut_off"]) for p in check["probes"]] == [
        ("required", "text", True), ("auto", "text", False)]
    assert check["probes"][0]["output_tokens"] > check["probes"][1]["output_tokens"]


def test_text_calls_fail_the_check_when_they_are_refused(stub, fast_cli, capsys, monkeypatch):
    provider = stub(llama_cpp_qwen)
    fast_cli(provider.base_url)
    monkeypatch.setenv("REINS_TEXT_TOOL_CALLS", "refuse")
    code, out = _doctor(capsys)
    assert code == 4
    assert "no tool calling (REINS_TOOL_CHOICE=required); calls written as text are refused" in out
    assert "tool calls: written as text" in out
    assert "export REINS_TEXT_TOOL_CALLS=recover" in out
    assert "Ping" not in [kind_of(b) for b in provider.bodies()]  # stops before the structured check


def test_a_schema_the_server_refuses_is_named_with_its_reason_in_one_line(stub, fast_cli, capsys):
    refusal = HttpError(400, f"Failed to initialize samplers: failed to parse grammar\n(key {KEY})")
    provider = stub(lambda body: refusal if kind_of(body) == "DeliveryPlan" else cooperative(body))
    fast_cli(provider.base_url)

    code, out = _doctor(capsys)

    assert code == 4
    assert "check stub-model: FAILED - 1 contract schema(s) not usable: see below" in out
    line = next(line.strip() for line in out.splitlines() if "schema DeliveryPlan" in line)
    assert line.startswith("schema DeliveryPlan (delivery.plan) refused: HTTP 400 - Failed to initialize samplers: "
                           "failed to parse grammar (key ")
    assert "\n" not in line  # one line, the key redacted (checked by _doctor)


def test_a_tool_less_model_gets_the_no_tool_calling_verdict(stub, fast_cli, capsys):
    provider = stub(text_only)  # Gemma 3 270M: its template has no tools, every answer is prose
    fast_cli(provider.base_url)
    code, out = _doctor(capsys, "--json")
    (check,) = json.loads(out)["checks"]
    assert code == 4 and check["verdict"] == "no tool calling"
    assert not any("REINS_TOOL_CHOICE" in line for line in check["recommended"])
    assert [(p["style"], p["call"]) for p in check["probes"]] == [("required", "none"), ("auto", "none")]


def test_a_style_that_times_out_is_printed_and_the_others_are_still_tried(stub, fast_cli, capsys, monkeypatch):
    # llama.cpp with "required" pads to the bound: slower than the manager's timeout here, "auto" is not.
    def slow_required(body):
        if tool_names(body) == ["ping"] and body.get("tool_choice") == "required":
            time.sleep(2)
        return llama_cpp_qwen(body)

    provider = stub(slow_required)
    fast_cli(provider.base_url)
    monkeypatch.setenv("REINS_TIMEOUT_MANAGER", "1")

    code, out = _doctor(capsys)

    assert "tool_choice required: timed out after 1 s" in out
    assert "tool_choice auto: tool call written as text" in out
    assert "check stub-model: FAILED - timed out (REINS_TOOL_CHOICE=required); tool calls: written as text" in out
    assert "export REINS_TOOL_CHOICE=auto" in out
    assert code == 4
    assert [b.get("tool_choice") for b in provider.bodies() if kind_of(b) == "tools:ping"] == ["required", "auto"]


def test_a_server_too_slow_for_the_tasklist_draft_gets_a_bound_that_fits_its_timeout(stub, fast_cli, capsys,
                                                                                      monkeypatch):
    def slow(body):
        if tool_names(body) == ["ping"] and body.get("tool_choice") == "required":
            time.sleep(2)  # padded to the bound: about 250 tokens in 2 s at best, under 130 tokens/s
        return llama_cpp_qwen(body)

    provider = stub(slow)
    fast_cli(provider.base_url)
    monkeypatch.setenv("REINS_TIMEOUT_TASKLIST", "10")
    code, out = _doctor(capsys)
    assert code == 0
    assert "export REINS_MAX_TOKENS_TASKLIST=1024" in out  # 8192 tokens would not fit in 10 s here

    provider = stub(llama_cpp_qwen)  # as fast as the loopback goes: the draft's default bound fits
    fast_cli(provider.base_url)
    monkeypatch.setenv("REINS_TIMEOUT_TASKLIST", "600")
    code, out = _doctor(capsys)
    assert "REINS_MAX_TOKENS_TASKLIST" not in out


ESCALATION_KEY = "sk-escalation-OWN-0123456789abcdef0123"


def test_each_roles_escalation_model_is_shown_and_probed_on_its_own_endpoint_with_its_own_key(
        stub, fast_cli, capsys, monkeypatch):
    provider = stub(cooperative)
    stronger = stub(cooperative)
    fast_cli(provider.base_url, REINS_MODEL_FALLBACK=f"backup, escalate=big@{stronger.base_url}#REINS_BIG_KEY",
             REINS_MODEL_ESCALATE_REVIEWER="huge")
    monkeypatch.setenv("REINS_BIG_KEY", ESCALATION_KEY)

    code, out = _doctor(capsys)

    host = stronger.base_url.split("//")[1].split("/")[0]
    assert code == 0
    assert f"  planner     openai-compatible:stub-model (then openai-compatible:backup; escalates to " \
           f"openai-compatible:big@{host})" in out
    assert "  reviewer    openai-compatible:stub-model (then openai-compatible:backup; escalates to " \
           "openai-compatible:huge)" in out
    assert f"check big@{stronger.base_url}#REINS_BIG_KEY: ok" in out and "check huge: ok" in out
    # the escalation model is probed like the role's own: each tool-choice style, JSON, the real schemas
    kinds = [kind_of(b) for b in stronger.bodies()]
    assert kinds[:3] == ["tools:ping", "tools:ping", "Ping"] and "DeliveryPlan" in kinds
    assert {h["authorization"] for h in stronger.headers} == {f"Bearer {ESCALATION_KEY}"}  # never the role's key
    assert {b["model"] for b in stronger.bodies()} == {"big"}
    assert {b["model"] for b in provider.bodies()} == {"stub-model", "backup", "huge"}
    assert ESCALATION_KEY not in out

    assert main(["doctor", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["escalations"]["manager"] == f"openai-compatible:big@{host}"
    assert report["escalations"]["reviewer"] == "openai-compatible:huge"


def test_no_json_schema_output_recommends_function_calling_when_that_works(stub, fast_cli, capsys):
    refused = HttpError(400, "response_format json_schema is not supported by this server")
    provider = stub(lambda body: refused if body.get("response_format") else cooperative(body))
    fast_cli(provider.base_url)
    code, out = _doctor(capsys)
    assert code == 4  # the configured method still fails: the check fails until the setting changes
    assert "check stub-model: FAILED - HTTP 400; function_calling works (see recommended)" in out
    assert "export REINS_STRUCTURED_METHOD=function_calling" in [line.strip() for line in out.splitlines()]
    pings = [b for b in provider.bodies() if kind_of(b) == "Ping"]
    assert [bool(b.get("response_format")) for b in pings] == [True, False]  # json_schema, then function_calling


def test_no_structured_output_at_all_recommends_no_method(stub, fast_cli, capsys):
    provider = stub(lambda body: Completion(content="ok!") if kind_of(body) == "Ping" else cooperative(body))
    fast_cli(provider.base_url)
    code, out = _doctor(capsys)
    assert code == 4 and "check stub-model: FAILED - no JSON-schema output (REINS_STRUCTURED_METHOD=json_schema)\n" in out
    assert "REINS_STRUCTURED_METHOD=" not in out.replace("(REINS_STRUCTURED_METHOD=json_schema)", "")


def test_doctor_shows_the_assistant_roles_vision_escalations_and_the_persona(clean_doctor_env, capsys, tmp_path):
    persona = tmp_path / "persona.toml"
    persona.write_text('instructions = "Be brief."\n[[examples]]\nrequest = "hi"\nanswer = "Hello."\n')
    clean_doctor_env({"REINS_MODEL": "m", "REINS_MODEL_CLASSIFY": "small", "REINS_MODEL_ESCALATE": "big",
                      "REINS_MODEL_VISION": "eyes", "REINS_ASSISTANT_PROMPT_FILE": str(persona)})
    assert main(["doctor", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    roles = report["assistant_roles"]
    assert roles["classify"] == {"model": "openai-compatible:small", "from": "own", "escalation": "openai-compatible:big"}
    assert roles["answer"] == {"model": "openai-compatible:m", "from": "chat", "escalation": "openai-compatible:big"}
    assert roles["vision"] == {"model": "openai-compatible:eyes", "from": "own", "escalation": None}  # never the shared one
    assert report["persona"] == {"file": "persona.toml", "loaded": True, "problem": None, "instructions": True,
                                 "examples": 1}
    assert main(["doctor"]) == 0
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    assert "step        openai-compatible:m (the chat role's; escalates to openai-compatible:big)" in lines
    assert "vision      openai-compatible:eyes" in lines
    assert "persona           persona.toml: loaded (instructions, 1 example(s))" in lines


def test_doctor_says_when_no_vision_model_or_persona_is_configured_and_refuses_a_broken_persona(
        clean_doctor_env, capsys, tmp_path):
    clean_doctor_env({})
    assert main(["doctor"]) == 0
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    assert "vision      not configured (REINS_MODEL_VISION): a message with an image is refused" in lines
    assert "persona           none (REINS_ASSISTANT_PROMPT_FILE not set)" in lines
    broken = tmp_path / "persona.toml"
    broken.write_text('instructions = 3\n')
    clean_doctor_env({"REINS_ASSISTANT_PROMPT_FILE": str(broken)})
    assert main(["doctor"]) == 2
    line = next(line.strip() for line in capsys.readouterr().out.splitlines() if line.strip().startswith("persona"))
    assert line.startswith("persona           NOT loaded - REINS_ASSISTANT_PROMPT_FILE: persona.toml: instructions")
