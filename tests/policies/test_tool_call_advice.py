"""doctor's advice: which tool-choice style, text-call mode and manager bound suit what the probe saw."""

import pytest

from reins.policies.tools.call_advice import (
    ToolCallObservation,
    advise,
    manager_bound,
    other_structured_method,
    speed_bound,
    structured_method_advice,
    tool_call_verdict,
)


def seen(style, native=False, text=False, tokens=15, cut_off=False):
    return ToolCallObservation(style, native, text, tokens, cut_off)


# What llama-server with Qwen2.5-Coder-0.5B did: required → text padded to the 256 bound; auto → text, 15 tokens.
QWEN = [seen("required", text=True, tokens=256, cut_off=True), seen("auto", text=True, tokens=15)]


@pytest.mark.parametrize(
    ("observations", "expected"),
    [
        (QWEN, ("auto", "recover", 512, False)),
        ([seen("required", native=True, tokens=20), seen("auto", native=True, tokens=18)], ("required", "recover", 512, True)),
        ([seen("required", native=True, tokens=20), seen("auto", native=True, tokens=10)],
         ("required", "recover", 512, True)),  # forcing the call beats ten tokens
        ([seen("required", native=True, tokens=256, cut_off=True), seen("auto", native=True, tokens=10)],
         ("auto", "recover", 448, True)),
        ([seen("required", native=True, tokens=256, cut_off=True), seen("auto", text=True, tokens=15)],
         ("required", "recover", 512, True)),  # a native call beats a text one
        ([seen("required", text=True, tokens=256, cut_off=True), seen("auto")], ("required", "recover", 512, False)),
        ([seen("named", native=True, tokens=12), seen("required", native=True, tokens=12), seen("auto")],
         ("required", "recover", 512, True)),
        ([seen("required", tokens=256, cut_off=True), seen("auto", tokens=40)], None),  # prose only: no advice
        ([], None),
    ],
    ids=["qwen-llama-cpp", "native-both", "native-fewer-tokens", "native-not-cut-off", "native-over-text", "text-only-padded",
         "tie-prefers-required", "no-calls", "nothing-probed"],
)
def test_advise(observations, expected):
    advice = advise(observations, default_manager_bound=512)
    got = None if advice is None else (advice.tool_choice, advice.text_tool_calls, advice.manager_max_tokens,
                                       advice.native)
    assert got == expected


@pytest.mark.parametrize(("tokens", "bound"), [(0, 384), (15, 512), (10, 448), (100, 1024), (-3, 384)])
def test_manager_bound(tokens, bound):
    assert manager_bound(tokens) == bound


def test_exports_name_the_three_variables():
    advice = advise(QWEN, 512)
    assert advice.exports() == ["export REINS_TOOL_CHOICE=auto", "export REINS_TEXT_TOOL_CALLS=recover",
                                "export REINS_MAX_TOKENS_MANAGER=512"]


def _seen(native: bool, text: bool) -> ToolCallObservation:
    return ToolCallObservation("auto", native, text, 20, False)


@pytest.mark.parametrize(
    ("observations", "verdict"),
    [
        ([_seen(True, False), _seen(False, True)], "native"),
        ([_seen(False, True), _seen(False, False)], "written as text"),
        ([_seen(False, False), _seen(False, False)], "no tool calling"),
        ([], "no tool calling"),  # every style failed or timed out
    ],
)
def test_the_verdict_is_native_written_as_text_or_no_tool_calling(observations, verdict):
    assert tool_call_verdict(observations) == verdict


@pytest.mark.parametrize(
    ("tokens_per_s", "timeout_s", "bound", "advised"),
    [
        (100.0, 180, 8192, None),  # 14,400 tokens fit: the default stays
        (20.0, 180, 8192, 2816),  # 2,880 fit, rounded down to 256
        (5.0, 180, 8192, 1024),  # 720 fit: no shorter than a draft can be
        (0.0, 180, 8192, None),  # speed unknown
        (50.0, 0, 8192, None),
        (10.0, 600, 4096, None),  # a bound the user lowered already fits
    ],
)
def test_a_bound_fits_what_the_server_generates_within_the_timeout(tokens_per_s, timeout_s, bound, advised):
    assert speed_bound(tokens_per_s, timeout_s, bound) == advised


@pytest.mark.parametrize(
    ("configured", "worked", "line"),
    [
        ("json_schema", {"json_schema": False, "function_calling": True}, "export REINS_STRUCTURED_METHOD=function_calling"),
        ("function_calling", {"function_calling": False, "json_schema": True}, "export REINS_STRUCTURED_METHOD=json_schema"),
        ("json_schema", {"json_schema": True, "function_calling": True}, None),  # the configured one works
        ("json_schema", {"json_schema": False, "function_calling": False}, None),  # no setting helps
        ("json_schema", {"json_schema": False}, None),  # the other was not tried
    ],
)
def test_structured_method_advice(configured, worked, line):
    assert structured_method_advice(configured, worked) == line


def test_other_structured_method():
    assert [other_structured_method(m) for m in ("json_schema", "function_calling", "xml")] == [
        "function_calling", "json_schema", None]
