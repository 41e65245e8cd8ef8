"""The skill library: parsing SKILL.md, the directories it is loaded from, and what agents see."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from jupyter_copilot.mcp.skills import (
    MAX_SKILL_BYTES,
    Skill,
    SkillError,
    SkillLibrary,
    SkillRoot,
    bundled_root,
    parse_skill,
    skill_roots,
)
from jupyter_copilot.protocol.refusals import HTTP_STATUS, Refusal

#: Text that only ever appears in skill bodies: it must never reach a summary or a warning.
CANARY = "BODY-CANARY-7f3a"

FULL_FRONT = """\
id: demo
title: A demo skill
description: Shows every key.
agents: [claude, codex]
readOnly: false
requiresContextRefs: [selected_cell, cell_outputs]
tools: [notebook_read_selected_cell, notebook_edit_cell]
"""

MINIMAL_FRONT = "id: demo\ntitle: Demo\ndescription: The minimum.\n"

BUNDLED = {
    "chat-only": ((), (), True),
    "propose-cell-edit": (
        ("notebook_read_selected_cell", "notebook_edit_cell"),
        ("selected_cell",),
        False,
    ),
    "propose-new-cell": (
        ("notebook_read_selected_cell", "notebook_insert_cell"),
        ("selected_cell",),
        False,
    ),
    "run-a-cell": (
        ("notebook_read_selected_cell", "notebook_run_cell"),
        ("selected_cell",),
        False,
    ),
    "read-notebook-pages": (
        ("context_snapshot", "notebook_read_cells"),
        ("active_notebook",),
        True,
    ),
    "read-selected-cell": (
        ("context_snapshot", "notebook_read_selected_cell"),
        ("selected_cell",),
        True,
    ),
}


def skill_text(front: str, body: str = f"Do the thing. {CANARY}\n") -> str:
    return f"---\n{front}---\n{body}"


def write_skill(root: Path, folder: str, text: str | None = None, **meta: str) -> Path:
    """Write ``<root>/<folder>/SKILL.md``: ``text`` as is, else a valid skill for ``folder``."""
    if text is None:
        description = meta.get("description", f"The {folder} skill.")
        body = meta.get("body", f"Body of {folder} from {root.name}. {CANARY}\n")
        agents = meta.get("agents", '"*"')
        front = f"id: {folder}\ntitle: T\ndescription: {description}\nagents: {agents}\n"
        text = skill_text(front, body)
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def make_skill(skill_id: str, agents: tuple[str, ...] = ("*",), body: str = CANARY) -> Skill:
    return Skill(
        id=skill_id,
        title=f"{skill_id} title",
        description=f"What {skill_id} is for.",
        agents=agents,
        read_only=True,
        requires_context_refs=(),
        tools=(),
        body=body,
    )


@pytest.fixture
def log(caplog: pytest.LogCaptureFixture) -> logging.Logger:
    caplog.set_level(logging.DEBUG, logger="test_skills")
    return logging.getLogger("test_skills")


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


# Parsing


def test_every_front_matter_key_is_read() -> None:
    skill = parse_skill(skill_text(FULL_FRONT, "\n\n# Steps\nRead first.\n\n"), "demo")
    assert skill == Skill(
        id="demo",
        title="A demo skill",
        description="Shows every key.",
        agents=("claude", "codex"),
        read_only=False,
        requires_context_refs=("selected_cell", "cell_outputs"),
        tools=("notebook_read_selected_cell", "notebook_edit_cell"),
        body="# Steps\nRead first.",
    )


def test_optional_keys_default_to_every_agent_read_only_and_nothing_required() -> None:
    skill = parse_skill(skill_text(MINIMAL_FRONT), "demo")
    assert skill.agents == ("*",)
    assert skill.read_only is True
    assert skill.requires_context_refs == ()
    assert skill.tools == ()


def test_agents_may_be_a_bare_star() -> None:
    skill = parse_skill(skill_text(MINIMAL_FRONT + 'agents: "*"\n'), "demo")
    assert skill.agents == ("*",)


def test_crlf_line_ends_and_a_byte_order_mark_are_accepted() -> None:
    text = "\ufeff" + skill_text(MINIMAL_FRONT, "Body line.\n").replace("\n", "\r\n")
    skill = parse_skill(text, "demo")
    assert (skill.id, skill.description, skill.body) == ("demo", "The minimum.", "Body line.")


def test_a_folded_description_that_is_one_line_is_accepted() -> None:
    front = "id: demo\ntitle: Demo\ndescription: >\n  Folded onto\n  one line.\n"
    assert parse_skill(skill_text(front), "demo").description == "Folded onto one line."


MALFORMED = {
    "no opening line": (MINIMAL_FRONT + "---\nbody\n", "must start with a '---' line"),
    "no closing line": ("---\n" + MINIMAL_FRONT + "body\n", "no closing '---'"),
    "not yaml": (skill_text("id: [demo\ntitle: x\n"), "not valid YAML at line"),
    "deeply nested yaml": (skill_text("id: " + "[" * 5000 + "]" * 5000 + "\n"), "not valid YAML"),
    "impossible date": (skill_text("id: demo\ntitle: 2020-13-45\ndescription: D\n"), "YAML"),
    "python tag": (skill_text("id: !!python/object:os.system {}\n"), "not valid YAML"),
    "not a mapping": (skill_text("- id\n- title\n"), "must be a mapping"),
    "empty front matter": (skill_text(""), "must be a mapping"),
    "unknown key": (skill_text(MINIMAL_FRONT + "model: gpt\n"), "unknown front matter key"),
    "missing id": (skill_text("title: T\ndescription: D\n"), "missing front matter key(s): id"),
    "missing title": (skill_text("id: demo\ndescription: D\n"), "key(s): title"),
    "missing description": (skill_text("id: demo\ntitle: T\n"), "key(s): description"),
    "id not a string": (skill_text("id: 12\ntitle: T\ndescription: D\n"), "id must be"),
    "id with capitals": (skill_text("id: Demo\ntitle: T\ndescription: D\n"), "id must be"),
    "id starting with dash": (skill_text("id: -demo\ntitle: T\ndescription: D\n"), "id must"),
    "id too long": (skill_text(f"id: {'a' * 65}\ntitle: T\ndescription: D\n"), "id must be"),
    "id not the folder": (skill_text("id: other\ntitle: T\ndescription: D\n"), "folder"),
    "empty title": (skill_text("id: demo\ntitle: ''\ndescription: D\n"), "title must be"),
    "two-line title": (skill_text('id: demo\ntitle: "a\\nb"\ndescription: D\n'), "single line"),
    "title not a string": (skill_text("id: demo\ntitle: [a]\ndescription: D\n"), "title must"),
    "empty description": (skill_text("id: demo\ntitle: T\ndescription:\n"), "description must"),
    "two-line description": (
        skill_text("id: demo\ntitle: T\ndescription: |\n  one\n  two\n"),
        "description must be a single line",
    ),
    "long description": (
        skill_text(f"id: demo\ntitle: T\ndescription: {'d' * 201}\n"),
        "longer than 200",
    ),
    "agents not a list": (skill_text(MINIMAL_FRONT + "agents: claude\n"), "agents must be"),
    "agents empty": (skill_text(MINIMAL_FRONT + "agents: []\n"), "agents must not be empty"),
    "agents not strings": (skill_text(MINIMAL_FRONT + "agents: [1]\n"), "agents must be"),
    "readOnly not a bool": (skill_text(MINIMAL_FRONT + "readOnly: 'no'\n"), "readOnly must"),
    "unknown context ref": (
        skill_text(MINIMAL_FRONT + "requiresContextRefs: [whole_disk]\n"),
        "requiresContextRefs may only list",
    ),
    "repeated context ref": (
        skill_text(MINIMAL_FRONT + "requiresContextRefs: [selected_cell, selected_cell]\n"),
        "the same entry twice",
    ),
    "unknown tool": (skill_text(MINIMAL_FRONT + "tools: [run_cell]\n"), "tools may only list"),
    "tools not a list": (skill_text(MINIMAL_FRONT + "tools: skill_read\n"), "tools must be"),
    "read-only skill with the edit tool": (
        skill_text(MINIMAL_FRONT + "tools: [notebook_edit_cell]\n"),
        "readOnly is true but tools lists notebook_edit_cell",
    ),
    "empty body": (skill_text(MINIMAL_FRONT, "\n  \n"), "body after the front matter is empty"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_skill_is_refused_with_a_reason_that_never_quotes_the_body(case: str) -> None:
    text, reason = MALFORMED[case]
    with pytest.raises(SkillError) as raised:
        parse_skill(text, "demo")
    assert reason in str(raised.value)
    assert CANARY not in str(raised.value)


def test_skill_error_is_a_value_error() -> None:
    assert issubclass(SkillError, ValueError)


# What an agent sees


def test_visible_to_follows_the_agents_list() -> None:
    assert make_skill("a").visible_to("anyone")
    only = make_skill("b", agents=("claude", "external"))
    assert only.visible_to("claude")
    assert only.visible_to("external")
    assert not only.visible_to("codex")


def test_summary_has_one_line_per_visible_skill_and_no_body() -> None:
    library = SkillLibrary(
        {
            "zeta": make_skill("zeta"),
            "alpha": make_skill("alpha"),
            "private": make_skill("private", agents=("codex",)),
        }
    )
    assert library.summary("claude") == (
        "<available-skills>\n"
        "Call skill_read with a skill id to load that skill's instructions.\n"
        "- alpha: What alpha is for.\n"
        "- zeta: What zeta is for.\n"
        "</available-skills>"
    )
    assert "- private: What private is for.\n" in library.summary("codex")
    assert CANARY not in library.summary("codex")


def test_summary_of_an_empty_library_still_says_how_to_load_skills() -> None:
    assert SkillLibrary({}).summary("claude") == (
        "<available-skills>\n"
        "Call skill_read with a skill id to load that skill's instructions.\n"
        "</available-skills>"
    )


def test_visible_skills_are_sorted_by_id_and_filtered_by_agent() -> None:
    library = SkillLibrary(
        {
            "b": make_skill("b"),
            "a": make_skill("a", agents=("codex",)),
            "c": make_skill("c"),
        }
    )
    assert [s.id for s in library.visible("codex")] == ["a", "b", "c"]
    assert [s.id for s in library.visible("claude")] == ["b", "c"]


def test_read_returns_the_body_tools_and_constraints() -> None:
    text = skill_text(FULL_FRONT, "Read, then replace the whole cell.\n")
    library = SkillLibrary({"demo": parse_skill(text, "demo")})
    assert library.read("demo", "claude") == {
        "skillId": "demo",
        "content": "Read, then replace the whole cell.",
        "tools": ["notebook_read_selected_cell", "notebook_edit_cell"],
        "constraints": {
            "readOnly": False,
            "requiresContextRefs": ["selected_cell", "cell_outputs"],
        },
    }


@pytest.mark.parametrize("skill_id", ["missing", "", "../etc/passwd", "private"])
def test_unknown_or_hidden_skill_is_refused_as_unknown_skill(skill_id: str) -> None:
    library = SkillLibrary(
        {"demo": make_skill("demo"), "private": make_skill("private", agents=("codex",))}
    )
    with pytest.raises(Refusal) as raised:
        library.read(skill_id, "claude")
    assert raised.value.code == "unknown-skill"
    assert raised.value.status == 404
    assert CANARY not in raised.value.message


def test_a_library_refuses_a_skill_filed_under_another_id() -> None:
    with pytest.raises(ValueError, match="filed under"):
        SkillLibrary({"other": make_skill("demo")})


# Where skills come from


def test_roots_go_from_the_package_to_data_dirs_reversed_to_skills_paths(tmp_path: Path) -> None:
    user, env, system = (str(tmp_path / d) for d in ("user", "env", "system"))
    roots = skill_roots([user, env, system], [str(tmp_path / "x"), str(tmp_path / "y")])
    assert roots == [
        SkillRoot(bundled_root(), "package"),
        SkillRoot(tmp_path / "system" / "copilot" / "skills", "Jupyter data directory"),
        SkillRoot(tmp_path / "env" / "copilot" / "skills", "Jupyter data directory"),
        SkillRoot(tmp_path / "user" / "copilot" / "skills", "Jupyter data directory"),
        SkillRoot(tmp_path / "x", "CopilotApp.skills_paths"),
        SkillRoot(tmp_path / "y", "CopilotApp.skills_paths"),
    ]


def test_skills_paths_expand_the_home_directory() -> None:
    (root,) = skill_roots([], ["~/my-skills"])[1:]
    assert root.path == Path.home() / "my-skills"


def test_a_later_directory_overrides_a_skill_of_the_same_id(
    tmp_path: Path, log: logging.Logger
) -> None:
    user, system = tmp_path / "user", tmp_path / "system"
    extra_1, extra_2 = tmp_path / "extra-1", tmp_path / "extra-2"
    for data_dir in (user, system):
        write_skill(data_dir / "copilot" / "skills", "shared", body=f"from {data_dir.name}\n")
    write_skill(system / "copilot" / "skills", "system-only")
    write_skill(user / "copilot" / "skills", "chat-only", body="admin's chat-only\n")
    write_skill(extra_1, "paths", body="from extra-1\n")
    write_skill(extra_2, "paths", body="from extra-2\n")
    write_skill(extra_1, "shared", body="from extra-1\n")

    roots = skill_roots([str(user), str(system)], [str(extra_1), str(extra_2)])
    library = SkillLibrary.load(roots, log)

    def content(skill_id: str) -> str:
        return str(library.read(skill_id, "claude")["content"])

    assert content("shared") == "from extra-1"
    assert content("paths") == "from extra-2"
    assert content("chat-only") == "admin's chat-only"  # the user data dir beats the package
    assert "Help in chat-only use" not in content("chat-only")
    assert content("system-only").startswith("Body of system-only")
    assert content("read-selected-cell")  # bundled skills are still there


def test_a_user_data_dir_overrides_a_system_one(tmp_path: Path, log: logging.Logger) -> None:
    user, system = tmp_path / "user", tmp_path / "system"
    write_skill(user / "copilot" / "skills", "shared", body="from user\n")
    write_skill(system / "copilot" / "skills", "shared", body="from system\n")
    library = SkillLibrary.load(skill_roots([str(user), str(system)], []), log)
    assert library.read("shared", "x")["content"] == "from user"


def test_missing_roots_and_folders_without_skill_md_are_skipped_quietly(
    tmp_path: Path, log: logging.Logger, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "skills"
    write_skill(root, "good")
    (root / "notes").mkdir()
    (root / "README.md").write_text("not a skill folder")
    write_skill(root, ".hidden", text="not even a skill")
    roots = [SkillRoot(tmp_path / "absent", "CopilotApp.skills_paths"), SkillRoot(root, "test")]
    library = SkillLibrary.load(roots, log)
    assert [s.id for s in library.visible("x")] == ["good"]
    assert warnings_of(caplog) == []


def test_malformed_skill_is_skipped_with_a_warning_naming_the_file_but_no_path(
    tmp_path: Path, log: logging.Logger, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "admin-skills"
    write_skill(root, "good")
    bad = write_skill(root, "broken", text=skill_text("id: broken\ntitle: T\n"))
    library = SkillLibrary.load([SkillRoot(root, "Jupyter data directory")], log)

    assert [s.id for s in library.visible("x")] == ["good"]
    (warning,) = warnings_of(caplog)
    assert "broken/SKILL.md" in warning
    assert "Jupyter data directory" in warning
    assert "missing front matter key(s): description" in warning
    assert str(tmp_path) not in warning
    assert CANARY not in warning
    debug = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert any(str(bad) in m for m in debug)


def test_no_path_is_logged_at_info_or_above(
    tmp_path: Path, log: logging.Logger, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "skills"
    write_skill(root, "good")
    write_skill(root, "Bad_Name")
    (tmp_path / "a-file").write_text("")
    roots = [SkillRoot(root, "test"), SkillRoot(tmp_path / "a-file", "CopilotApp.skills_paths")]
    SkillLibrary.load(roots, log)
    messages = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert len(warnings_of(caplog)) == 2
    assert not any(str(tmp_path) in m for m in messages)


def test_oversized_file_is_skipped_but_one_of_exactly_64_kib_loads(
    tmp_path: Path, log: logging.Logger, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "skills"
    head = skill_text("id: {}\ntitle: T\ndescription: D\n", "")
    for folder, size in (("fits", MAX_SKILL_BYTES), ("too-big", MAX_SKILL_BYTES + 1)):
        text = head.format(folder)
        write_skill(root, folder, text=text + "x" * (size - len(text)))
        assert (root / folder / "SKILL.md").stat().st_size == size
    library = SkillLibrary.load([SkillRoot(root, "test")], log)
    assert [s.id for s in library.visible("x")] == ["fits"]
    (warning,) = warnings_of(caplog)
    assert "too-big/SKILL.md" in warning
    assert "larger than 64 KiB" in warning


def test_unreadable_and_non_utf8_files_are_skipped_with_a_warning(
    tmp_path: Path, log: logging.Logger, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "skills"
    write_skill(root, "good")
    (root / "a-directory" / "SKILL.md").mkdir(parents=True)
    (root / "dangling").mkdir()
    (root / "dangling" / "SKILL.md").symlink_to(tmp_path / "nowhere")
    (root / "latin-1").mkdir()
    (root / "latin-1" / "SKILL.md").write_bytes(
        skill_text(MINIMAL_FRONT, "caf\xe9").encode("latin-1")
    )
    library = SkillLibrary.load([SkillRoot(root, "test")], log)

    assert [s.id for s in library.visible("x")] == ["good"]
    warnings = warnings_of(caplog)
    assert len(warnings) == 3
    assert "a-directory/SKILL.md" in warnings[0] and "cannot be read" in warnings[0]
    assert "dangling/SKILL.md" in warnings[1] and "cannot be read" in warnings[1]
    assert "latin-1/SKILL.md" in warnings[2] and "not UTF-8" in warnings[2]
    assert not any(str(tmp_path) in w for w in warnings)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_is_skipped_without_blocking(
    tmp_path: Path, log: logging.Logger, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "pipe").mkdir()
    os.mkfifo(tmp_path / "pipe" / "SKILL.md")
    library = SkillLibrary.load([SkillRoot(tmp_path, "test")], log)
    assert library.visible("x") == []
    (warning,) = warnings_of(caplog)
    assert "pipe/SKILL.md" in warning and "not a regular file" in warning


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads any file")
def test_a_file_without_read_permission_is_skipped(
    tmp_path: Path, log: logging.Logger, caplog: pytest.LogCaptureFixture
) -> None:
    path = write_skill(tmp_path, "secret")
    path.chmod(0)
    try:
        library = SkillLibrary.load([SkillRoot(tmp_path, "test")], log)
    finally:
        path.chmod(0o644)
    assert library.visible("x") == []
    (warning,) = warnings_of(caplog)
    assert "secret/SKILL.md" in warning and "Permission denied" in warning


# The skills that ship with the package


def test_bundled_root_holds_the_shipped_skills() -> None:
    root = bundled_root()
    assert root.name in ("skills", "skills_bundled")
    assert sorted(p.name for p in root.iterdir() if (p / "SKILL.md").is_file()) == sorted(BUNDLED)


def test_the_bundled_skills_parse_with_their_tools_and_constraints(
    log: logging.Logger, caplog: pytest.LogCaptureFixture
) -> None:
    library = SkillLibrary.load([SkillRoot(bundled_root(), "package")], log)
    assert warnings_of(caplog) == []
    assert [s.id for s in library.visible("any-agent")] == sorted(BUNDLED)
    for skill in library.visible("any-agent"):
        tools, refs, read_only = BUNDLED[skill.id]
        assert (skill.tools, skill.requires_context_refs, skill.read_only) == (
            tools,
            refs,
            read_only,
        )
        assert skill.agents == ("*",)
        assert len(skill.body) > 500
    summary = library.summary("any-agent").splitlines()
    assert len(summary) == 2 + len(BUNDLED) + 1


def test_the_edit_skill_explains_every_refusal_code() -> None:
    text = (bundled_root() / "propose-cell-edit" / "SKILL.md").read_text(encoding="utf-8")
    body = parse_skill(text, "propose-cell-edit").body
    # Every code of the contract's table but those no edit call can end with (the
    # conversation API's own codes never come from a tool, nor do those of an agent's own
    # file and shell requests).
    codes = sorted(
        set(HTTP_STATUS)
        - {"unknown-action", "unknown-skill", "unknown-conversation", "conversation-busy"}
        - {"outside-root", "not-permitted", "notebook-file"}
        # Nor those of the kernel-variable tools, which only read.
        - {"unknown-variable", "kernel-busy", "unsupported-kernel"}
    )
    # 21 since page-error joined the vocabulary (docs/protocol.md section 7).
    assert len(codes) == 21
    for code in codes:
        assert f"| `{code}` |" in body, code
    for needed in ("expectedSourceHash", "diffReviewOpened", "sourceHashAfter", "approval card"):
        assert needed in body


def test_the_insert_skill_explains_every_code_an_insert_can_end_with() -> None:
    text = (bundled_root() / "propose-new-cell" / "SKILL.md").read_text(encoding="utf-8")
    body = parse_skill(text, "propose-new-cell").body
    # docs/protocol.md section 11.1, in its order, and `blocked` from the read before.
    codes = [
        "invalid-input", "kill-switch", "feature-disabled", "plan-mode", "denied",
        "no-active-page", "ambiguous-active-notebook", "not-authoring-view",
        "artifact-mismatch", "no-active-session", "read-only", "over-budget",
        "cell-not-found", "diff-unavailable", "timeout", "page-error", "aborted", "blocked",
    ]  # fmt: skip
    assert set(codes) <= set(HTTP_STATUS) | {"blocked"}
    for code in codes:
        assert f"| `{code}` |" in body, code
    for needed in ("afterCellId", "reviewOpened", "pending cell", "approval card", "Undo"):
        assert needed in body


def test_the_run_skill_explains_every_code_of_the_run_tool() -> None:
    text = (bundled_root() / "run-a-cell" / "SKILL.md").read_text(encoding="utf-8")
    body = parse_skill(text, "run-a-cell").body
    # docs/protocol.md section 11.2, in its order, and `blocked` from the read before.
    codes = [
        "invalid-input", "kill-switch", "feature-disabled", "plan-mode", "not-permitted",
        "no-active-page", "ambiguous-active-notebook", "not-authoring-view",
        "artifact-mismatch", "no-active-session", "read-only", "cell-not-found",
        "cell-locked", "cell-type-mismatch", "stale-source", "denied", "page-error",
        "timeout", "aborted", "blocked",
    ]  # fmt: skip
    assert set(codes) <= set(HTTP_STATUS) | {"blocked"}
    for code in codes:
        assert f"| `{code}` |" in body, code
    for needed in (
        "run card",
        "Allow once",
        "expectedSourceHash",
        "outputsOmitted",
        "no Autopilot",
    ):
        assert needed in body, needed


def test_the_read_skills_say_what_blocked_and_omitted_mean() -> None:
    for skill_id in ("read-selected-cell", "read-notebook-pages"):
        text = (bundled_root() / skill_id / "SKILL.md").read_text(encoding="utf-8")
        body = parse_skill(text, skill_id).body
        for needed in ("`blocked`", "omitted", "never guess", "untrusted"):
            assert needed.lower() in body.lower(), (skill_id, needed)
    pages = (bundled_root() / "read-notebook-pages" / "SKILL.md").read_text(encoding="utf-8")
    for needed in ("nextCursor", "artifact-mismatch", "includeOutputs", "cell_outputs"):
        assert needed in pages
