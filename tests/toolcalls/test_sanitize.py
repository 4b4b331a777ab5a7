"""Reasoning never reaches content; leaked scaffolding goes, prose stays."""

from __future__ import annotations

import pytest

from custom_components.toolbelt.toolcalls.text.sanitize import (
    clean,
    register_reasoning_delimiters,
    split_reasoning,
)


@pytest.mark.parametrize(
    ("text", "content", "reasoning"),
    [
        ("<think>plan</think>Hi.", "Hi.", "plan"),
        ("plan\n</think>\n\nHi.", "Hi.", "plan"),
        ("[THINK]plan[/THINK]Hi.", "Hi.", "plan"),
        ("<seed:think>plan</seed:think>Hi.", "Hi.", "plan"),
        (
            "<|START_THINKING|>plan<|END_THINKING|><|START_RESPONSE|>Hi.<|END_RESPONSE|>",
            "Hi.",
            "plan",
        ),
        ("<|channel>thought\nplan<channel|>Hi.", "Hi.", "plan"),
        (
            "<|channel|>analysis<|message|>plan<|end|><|start|>assistant<|channel|>final"
            "<|message|>Hi.<|return|>",
            "Hi.",
            "plan",
        ),
        ("<think>cut off mid-thought", "", "cut off mid-thought"),
        ("<think>a</think>B<think>c</think>D", "BD", "a\nc"),
    ],
)
def test_reasoning_forms(text: str, content: str, reasoning: str) -> None:
    assert clean(text) == (content, reasoning)


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("Hi.<|im_end|>", "Hi."),
        ("Hi.<|eot_id|>", "Hi."),
        ("<|im_start|>assistant\nHi.", "Hi."),
        ("Hi.<|end|>", "Hi."),
        ("<|python_tag|>", ""),
        ("Hi.\n</tool_call>", "Hi."),
        ("[TOOL_CALLS]", ""),
        ("The light is <co>on</co: 0:[1]>.", "The light is on."),
        ("Hi.<｜end▁of▁sentence｜>", "Hi."),
        ("Thought: easy one\nFinal Answer: It is 21 degrees.", "It is 21 degrees."),
        ("Thought: I can answer.\nThe door is locked.", "The door is locked."),
        ("The answer.\nObservation: invented\nmore invented", "The answer."),
        ("**Final Answer:** Done.", "Done."),
        ("Thought 1: easy\nAction 1: None\nFinal Answer 1: It is on.", "It is on."),
    ],
)
def test_leakage_removed(text: str, content: str) -> None:
    assert clean(text)[0] == content


@pytest.mark.parametrize(
    "text",
    [
        "Action: none needed — the garage door is already closed.",
        "Call to action: remember to replace the smoke detector batteries.",
        "Tool: a Phillips screwdriver.\nArguments against it: live wiring.",
        "Mistral models prefix calls with [TOOL_CALLS], but not here.",
        "Write <tool_call> tags only when calling.",
        'Your open windows are: ["kitchen", "bathroom"].',
        '```json\n{"type": "entities"}\n```',
        "Final thoughts: the plan works.",
        "Write a call like this:\n```\n# Tool: NAME\n# Arguments: {}\n```\nThen wait.",
        "A ReAct step looks like:\n```text\nThought: why\nAction: NAME\n"
        'Action Input: {"area": "kitchen"}\n```\nand the result follows.',
    ],
)
def test_prose_survives(text: str) -> None:
    assert clean(text)[0] == text


def test_a_fence_inside_a_scratchpad_stays_whole() -> None:
    """Labels shown in a fence are quoted; the scratchpad around it is still cut."""
    text = (
        "Thought: show the syntax\nFinal Answer: Use this:\n```\nAction: NAME\n"
        "Observation: done\n```\nThat is all."
    )
    assert clean(text)[0] == (
        "Use this:\n```\nAction: NAME\nObservation: done\n```\nThat is all."
    )


def test_reasoning_hook() -> None:
    register_reasoning_delimiters("<mm:think>", "</mm:think>")
    assert split_reasoning("<mm:think>x</mm:think>Hi") == ("Hi", "x")


@pytest.mark.parametrize("dialect", ["auto", "apriel"])
@pytest.mark.parametrize(
    ("reply", "content"),
    [
        # Apriel's answer markers around an answer that shows a code fence.
        (
            "[BEGIN FINAL RESPONSE]Run this:\n```\nha core restart\n```\n"
            "[END FINAL RESPONSE]",
            "Run this:\n```\nha core restart\n```",
        ),
        ("```\nx\n```\nhi <answer>", "```\nx\n```\nhi"),
        # Inside the fence the words are the example's, and stay.
        (
            "Like this:\n```\n<answer>text</answer>\n```\n<answer>On.</answer>",
            "Like this:\n```\n<answer>text</answer>\n```\nOn.",
        ),
    ],
)
def test_a_family_wrapper_around_a_fenced_answer_is_dropped(
    dialect: str, reply: str, content: str
) -> None:
    """A dialect's word removal inside ``clean`` meets ``clean``'s own fence
    slots and leaves them to it (it used to fail the whole parse)."""
    from custom_components.toolbelt.toolcalls import resolve_dialect
    from tests.toolcalls.dialect_helpers import catalog

    result = resolve_dialect(dialect).parse(reply, catalog())
    assert result.rejected == []
    assert result.content == content


@pytest.mark.parametrize(
    ("text", "content"),
    [
        # LLM-jp 4.1 writes a space after the token, then the role.
        ("<|start|> assistant<|channel|> final<|message|> 144", "144"),
        # Any other word after the space is the answer's, not a role.
        ("<|start|> Okay, turning it off now.", "Okay, turning it off now."),
        (
            "Messages begin with <|start|> followed by a role.",
            "Messages begin with  followed by a role.",
        ),
    ],
)
def test_a_role_after_start_and_a_space_goes_and_nothing_else(
    text: str, content: str
) -> None:
    assert clean(text)[0] == content
