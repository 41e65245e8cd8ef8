"""Which characters cards and diffs show as escapes, and how a command's program is found.

The list is ``hiddenCharacters`` in ``jupyter_copilot/schemas/vocabulary.json``; Python and the
lab extension must read it the same way (docs/security.md, "Cards and diffs").
"""

from __future__ import annotations

import os
import sys
import unicodedata
from pathlib import Path

import pytest

from jupyter_copilot.agents.shell import MAX_COMMAND_CHARS, SHELL, prepare, resolve_program
from jupyter_copilot.protocol import hiddenchars
from jupyter_copilot.protocol.refusals import Refusal
from tests.node_harness import run_node

#: The direction controls of Unicode's Bidi_Control property.
BIDI_CONTROLS = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]


def hidden_codes() -> list[int]:
    """Every code point Python calls hidden, surrogates left out."""
    return [
        code
        for code in range(0x110000)
        if not 0xD800 <= code <= 0xDFFF and hiddenchars.hidden_characters(chr(code))
    ]


def as_ranges(codes: list[int]) -> list[list[int]]:
    found: list[list[int]] = []
    for code in codes:
        if found and found[-1][1] == code - 1:
            found[-1][1] = code
        else:
            found.append([code, code])
    return found


def test_the_direction_controls_are_exactly_the_bidi_controls() -> None:
    bidi = [c for c in range(0x110000) if hiddenchars.bidi_controls(chr(c))]
    assert bidi == BIDI_CONTROLS


def test_every_format_control_and_separator_character_is_hidden() -> None:
    hidden = set(hidden_codes())
    for code in range(0x110000):
        category = unicodedata.category(chr(code))
        if category in ("Cf", "Zl", "Zp") or (category == "Cc" and code not in (9, 10)):
            assert code in hidden, f"U+{code:04X} ({category})"
    for ordinary in "a \t\n\u00a0\u05d0\u0627\U0001f600":
        assert ordinary not in hidden and ord(ordinary) not in hidden


def test_python_and_the_lab_extension_hide_the_same_characters() -> None:
    script = """
const { HiddenChars } = await import(LIB + '/hiddenchars.js');
const codes = [];
for (let c = 0; c <= 0x10ffff; c++) {
  if (c >= 0xd800 && c <= 0xdfff) continue;
  if (HiddenChars.kindOf(String.fromCodePoint(c)) !== null) codes.push(c);
}
const bidi = codes.filter(c => HiddenChars.kindOf(String.fromCodePoint(c)) === 'bidi');
process.stdout.write(JSON.stringify({
  codes, bidi,
  escaped: input.map(t => HiddenChars.escaped(t)),
}));
"""
    samples = ["X=#\u202e touch BIDI_RAN.txt", "a\u200bb\U000e0041\x1b[0m\r\n", "plain\ttext"]
    out = run_node(script, samples)
    assert as_ranges(out["codes"]) == as_ranges(hidden_codes())
    assert out["bidi"] == BIDI_CONTROLS
    assert out["escaped"] == [hiddenchars.escaped(t) for t in samples]


def test_escapes_name_the_code_point() -> None:
    assert hiddenchars.escaped("a\u202eb\U000e0041") == "a\u27e8U+202E\u27e9b\u27e8U+E0041\u27e9"
    assert hiddenchars.escaped("tab\tand\nnew line") == "tab\tand\nnew line"
    assert hiddenchars.escaped("\r") == "\u27e8U+000D\u27e9"


# -- finding the program -----------------------------------------------------------------------


@pytest.fixture
def bins(tmp_path: Path) -> Path:
    """Two folders with a program ``tool`` each, and one that is not executable."""
    for folder in ("first", "second", "work/local"):
        (tmp_path / folder).mkdir(parents=True)
        program = tmp_path / folder / "tool"
        program.write_text("#!/bin/sh\n")
        program.chmod(0o755)
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "tool").write_text("not a program\n")
    return tmp_path


def test_a_program_is_the_first_runnable_one_on_the_path(bins: Path) -> None:
    path = os.pathsep.join([str(bins / "plain"), str(bins / "first"), str(bins / "second")])
    assert resolve_program("tool", path, str(bins / "work")) == str(bins / "first" / "tool")
    assert resolve_program("missing", path, str(bins / "work")) is None
    # A folder is not a program.
    assert resolve_program("work", str(bins), str(bins)) is None


def test_relative_and_empty_path_entries_are_taken_from_the_commands_folder(
    bins: Path,
) -> None:
    work = str(bins / "work")
    assert resolve_program("tool", "local", work) == str(bins / "work" / "local" / "tool")
    assert resolve_program("tool", os.pathsep + "x", str(bins / "first")) == str(
        bins / "first" / "tool"
    )
    # Not the server's own folder.
    assert os.getcwd() != work


def test_a_name_with_a_slash_is_taken_from_the_commands_folder(bins: Path) -> None:
    assert resolve_program("./local/tool", "/usr/bin", str(bins / "work")) == str(
        bins / "work" / "local" / "tool"
    )
    assert resolve_program("../first/tool", "", str(bins / "work")) == str(bins / "first" / "tool")
    assert resolve_program(sys.executable, "", "/") == os.path.normpath(sys.executable)


def test_prepare_runs_a_line_in_the_shell_and_arguments_by_their_program(bins: Path) -> None:
    line = prepare("echo $HOME", [], str(bins), "")
    assert (line.program, line.argv, line.line) == (
        SHELL,
        [SHELL, "-c", "echo $HOME"],
        "echo $HOME",
    )
    command = prepare("tool", ["a b", "c"], str(bins), str(bins / "first"))
    program = str(bins / "first" / "tool")
    assert (command.program, command.argv, command.line) == (
        program,
        [program, "a b", "c"],
        "tool 'a b' c",
    )


@pytest.mark.parametrize(
    ("command", "args", "code"),
    [
        ("x" * (MAX_COMMAND_CHARS + 1), [], "over-budget"),
        ("tool", ["y" * MAX_COMMAND_CHARS], "over-budget"),
        ("echo \u202e", [], "invalid-input"),
        ("tool", ["\u2066"], "invalid-input"),
        ("echo \x00", [], "invalid-input"),
        ("missing", ["a"], "invalid-input"),
    ],
    ids=["long-line", "long-args", "bidi-line", "bidi-arg", "nul", "not-found"],
)
def test_prepare_refuses_what_cannot_be_shown_or_found(
    bins: Path, command: str, args: list[str], code: str
) -> None:
    with pytest.raises(Refusal) as refused:
        prepare(command, args, str(bins), str(bins / "first"))
    assert refused.value.code == code
