"""The skill rules: reading a SKILL.md, keeping unique names, the bounded index, the files a skill names."""

from __future__ import annotations

import pytest

from reins.policies.assistant.skills import (
    BAD_FRONT_MATTER,
    DUPLICATE_NAME,
    INDEX_LINE_CHARS,
    INSTRUCTIONS_TOO_LONG,
    NAME_MISMATCH,
    NO_INSTRUCTIONS,
    TOO_MANY,
    SkillRejected,
    index_lines,
    keep_unique,
    named_files,
    parse_skill,
)

GOOD = "---\nname: percent\ndescription: Percent arithmetic.\n---\nUse the calculator.\n"


@pytest.mark.parametrize(
    ("text", "folder", "code"),
    [
        ("Use the calculator.", "percent", BAD_FRONT_MATTER),  # no front matter
        ("---\nname: [percent\n---\nx", "percent", BAD_FRONT_MATTER),  # invalid YAML
        ("---\n- a list\n---\nx", "percent", BAD_FRONT_MATTER),  # not a mapping
        ("---\nname: percent\n---\nx", "percent", BAD_FRONT_MATTER),  # no description
        ("---\nname: percent\ndescription: d\nrun: rm -rf /\n---\nx", "percent", BAD_FRONT_MATTER),  # unknown key
        ("---\nname: Percent_Skill\ndescription: d\n---\nx", "Percent_Skill", BAD_FRONT_MATTER),  # not kebab-case
        ("---\nname: percent\ndescription: " + "d" * 1025 + "\n---\nx", "percent", BAD_FRONT_MATTER),
        ("---\nname: percent\ndescription: d\n---\nx", "other", NAME_MISMATCH),
        ("---\nname: percent\ndescription: d\n---\n   \n", "percent", NO_INSTRUCTIONS),
        ("---\nname: percent\ndescription: d\n---\n" + "x" * 8001, "percent", INSTRUCTIONS_TOO_LONG),
    ],
)
def test_a_broken_skill_is_rejected_with_its_reason(text, folder, code):
    with pytest.raises(SkillRejected) as raised:
        parse_skill(text, folder)
    assert raised.value.code == code


def test_a_good_skill_keeps_its_parts_and_the_optional_keys():
    parsed = parse_skill(GOOD, "percent")
    assert (parsed.name, parsed.description, parsed.instructions) == ("percent", "Percent arithmetic.", "Use the calculator.")
    extra = "---\nname: a-b\ndescription: d\nlicense: MIT\nallowed-tools: calculator\nmetadata:\n  team: x\n---\nbody"
    assert parse_skill(extra, "a-b").instructions == "body"


@pytest.mark.parametrize(
    ("names", "limit", "verdicts"),
    [
        (["a", "b"], 30, [None, None]),
        (["a", "b", "a"], 30, [None, None, DUPLICATE_NAME]),  # the later one (the user's) is left out
        (["a", "b", "c"], 2, [None, None, TOO_MANY]),
        (["a", "a", "b"], 1, [None, DUPLICATE_NAME, TOO_MANY]),
    ],
)
def test_keep_unique(names, limit, verdicts):
    assert keep_unique(names, limit) == verdicts


def test_the_index_cuts_each_line_and_bounds_the_whole():
    lines = index_lines([("a", "xy" * 300), ("b", "short")], max_chars=1000)
    assert len(lines[0]) == INDEX_LINE_CHARS and lines[1] == "b: short"
    assert len(index_lines([(f"s{i}", "y" * 150) for i in range(40)], max_chars=1000)) == 6


@pytest.mark.parametrize(
    ("instructions", "files"),
    [
        ("Read [zones.md](zones.md) then `data/rates.csv`.", ("zones.md", "data/rates.csv")),
        ("Never `../secret.md`, `/etc/passwd` or [x](http://evil.example/a.md).", ()),
        ("`SKILL.md` and `a.md` twice: `a.md`", ("a.md",)),
        ("no files here", ()),
    ],
)
def test_named_files(instructions, files):
    assert named_files(instructions) == files
