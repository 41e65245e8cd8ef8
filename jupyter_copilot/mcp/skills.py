"""The skill library: instructions that agents load on demand with ``skill_read``.

A skill is a folder ``<id>/`` holding a ``SKILL.md``: YAML front matter between two ``---``
lines, then a markdown body for the agent. Only one-line descriptions reach the MCP server's
``instructions`` (`SkillLibrary.summary`); a body is sent only when an agent asks for it.

Skills are loaded from these directories (`skill_roots`); a skill in a later directory
replaces an earlier one with the same id:

1. the skills shipped in the package (`bundled_root`);
2. ``<data dir>/copilot/skills`` for each Jupyter data directory, from the lowest priority one
   of ``jupyter --paths`` (system) to the highest (the user's own), so an administrator can
   install skills for every user of a machine or hub;
3. each directory of ``CopilotApp.skills_paths``, in the order given.

A malformed, unreadable or oversized ``SKILL.md`` is skipped with a warning naming
``<folder>/SKILL.md`` and the kind of directory; loading never raises. Paths are never logged
at INFO or above (full paths go to DEBUG).
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from jupyter_copilot.protocol import vocabulary
from jupyter_copilot.protocol.refusals import Refusal

if TYPE_CHECKING:
    from typing import TypeAlias

    Logger: TypeAlias = logging.Logger | logging.LoggerAdapter[Any]

#: The file name of a skill inside its folder.
SKILL_FILE = "SKILL.md"
#: Larger ``SKILL.md`` files are skipped: a skill is a page of instructions, not a manual.
MAX_SKILL_BYTES = 64 * 1024
#: The longest description allowed; descriptions go into every agent's instructions.
MAX_DESCRIPTION_CHARS = 200
#: What a skill id (and so its folder name) may look like.
ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
#: The context references a skill may say it needs: those that read the notebook
#: (docs/protocol.md section 8; vocabulary ``contextRefs``).
CONTEXT_REFS = frozenset(vocabulary.NOTEBOOK_REFS)
#: The MCP tools that only read (vocabulary ``tools``).
READ_TOOLS = vocabulary.READ_TOOLS
#: The tools that change a notebook, which a read-only skill must not name.
WRITE_TOOLS = vocabulary.WRITE_TOOLS
#: The MCP tools a skill may name.
TOOL_NAMES = READ_TOOLS | WRITE_TOOLS

_REQUIRED_KEYS = ("id", "title", "description")
_OPTIONAL_KEYS = ("agents", "readOnly", "requiresContextRefs", "tools")
_SUMMARY_HEAD = (
    "<available-skills>\nCall skill_read with a skill id to load that skill's instructions.\n"
)
_SUMMARY_TAIL = "</available-skills>"


class SkillError(ValueError):
    """A ``SKILL.md`` is malformed. The message says what is wrong and never quotes the body."""


@dataclass(frozen=True)
class Skill:
    """One parsed skill: its front matter, normalised, and its markdown body."""

    id: str
    title: str
    description: str
    agents: tuple[str, ...]
    read_only: bool
    requires_context_refs: tuple[str, ...]
    tools: tuple[str, ...]
    body: str

    def visible_to(self, agent: str) -> bool:
        """Whether the agent with this id may see and read the skill."""
        return "*" in self.agents or agent in self.agents

    def to_read_result(self) -> dict[str, Any]:
        """The ``skill_read`` result: the body, the tools it uses and its constraints."""
        return {
            "skillId": self.id,
            "content": self.body,
            "tools": list(self.tools),
            "constraints": {
                "readOnly": self.read_only,
                "requiresContextRefs": list(self.requires_context_refs),
            },
        }


def parse_skill(text: str, folder_name: str) -> Skill:
    """Parse the text of ``<folder_name>/SKILL.md`` into a `Skill`.

    Raises `SkillError` when the front matter is missing, is not YAML, has an unknown key,
    lacks a required key, has a value of the wrong kind, or when the id differs from the
    folder name or the body is empty.
    """
    front, body = _split_front_matter(text)
    try:
        meta = yaml.safe_load(front)
    except Exception as e:  # not only YAMLError: deep nesting and bad dates raise others
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        raise SkillError(f"the front matter is not valid YAML{where}") from None
    if not isinstance(meta, dict):
        raise SkillError("the front matter must be a mapping of keys to values")
    unknown = sorted(repr(k)[:40] for k in meta if k not in _REQUIRED_KEYS + _OPTIONAL_KEYS)
    if unknown:
        raise SkillError(f"unknown front matter key(s): {', '.join(unknown)}")
    missing = [k for k in _REQUIRED_KEYS if k not in meta]
    if missing:
        raise SkillError(f"missing front matter key(s): {', '.join(missing)}")

    skill_id = meta["id"]
    if not isinstance(skill_id, str) or not ID_PATTERN.fullmatch(skill_id):
        raise SkillError("id must be 1-64 characters of a-z, 0-9 and '-', not starting with '-'")
    if skill_id != folder_name:
        raise SkillError("id must equal the name of the folder that holds SKILL.md")
    title = _one_line(meta["title"], "title")
    description = _one_line(meta["description"], "description")
    if len(description) > MAX_DESCRIPTION_CHARS:
        raise SkillError(f"description is longer than {MAX_DESCRIPTION_CHARS} characters")

    agents = meta.get("agents", ["*"])
    if agents == "*":
        agents = ["*"]
    agents = _string_list(agents, "agents")
    if not agents:
        raise SkillError("agents must not be empty; use '*' for every agent")
    read_only = meta.get("readOnly", True)
    if not isinstance(read_only, bool):
        raise SkillError("readOnly must be true or false")
    refs = _string_list(meta.get("requiresContextRefs", []), "requiresContextRefs", CONTEXT_REFS)
    tools = _string_list(meta.get("tools", []), "tools", TOOL_NAMES)
    if read_only and WRITE_TOOLS.intersection(tools):
        writes = ", ".join(sorted(WRITE_TOOLS.intersection(tools)))
        raise SkillError(f"readOnly is true but tools lists {writes}")
    body = body.strip()
    if not body:
        raise SkillError("the body after the front matter is empty")
    return Skill(
        id=skill_id,
        title=title,
        description=description,
        agents=tuple(agents),
        read_only=read_only,
        requires_context_refs=tuple(refs),
        tools=tuple(tools),
        body=body,
    )


def _split_front_matter(text: str) -> tuple[str, str]:
    """Split a ``SKILL.md`` into its front matter and its body."""
    lines = text.removeprefix("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].rstrip() != "---":
        raise SkillError("SKILL.md must start with a '---' line that opens the front matter")
    for i in range(1, len(lines)):
        if lines[i].rstrip() == "---":
            return "".join(lines[1:i]), "".join(lines[i + 1 :])
    raise SkillError("the front matter has no closing '---' line")


def _one_line(value: object, key: str) -> str:
    """A non-empty single-line string, surrounding whitespace removed."""
    if not isinstance(value, str) or not value.strip():
        raise SkillError(f"{key} must be a non-empty string")
    value = value.strip()
    if any(c in value for c in "\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029"):
        raise SkillError(f"{key} must be a single line")
    return value


def _string_list(value: object, key: str, allowed: frozenset[str] | None = None) -> list[str]:
    """A list of distinct strings, each one of ``allowed`` when that is given."""
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise SkillError(f"{key} must be a list of non-empty strings")
    if len(set(value)) != len(value):
        raise SkillError(f"{key} lists the same entry twice")
    if allowed is not None and not allowed.issuperset(value):
        raise SkillError(f"{key} may only list: {', '.join(sorted(allowed))}")
    return value


@dataclass(frozen=True)
class SkillRoot:
    """A directory of skill folders, with a label saying what kind of directory it is."""

    path: Path
    label: str


def bundled_root() -> Path:
    """The directory of the skills that ship with the package.

    In a wheel the repository's ``skills/`` folder is installed as
    ``jupyter_copilot/skills_bundled``; in a source checkout (or an editable install) it is
    the ``skills/`` folder next to the package.
    """
    package = Path(__file__).resolve().parents[1]
    installed = package / "skills_bundled"
    if installed.is_dir():
        return installed
    return package.parent / "skills"


def skill_roots(data_dirs: list[str], extra_paths: list[str]) -> list[SkillRoot]:
    """The directories to load skills from, lowest priority first.

    ``data_dirs`` is in the order of ``jupyter_core.paths.jupyter_path()`` (highest priority
    first), so it is walked backwards; ``extra_paths`` is ``CopilotApp.skills_paths``, where a
    later directory wins over an earlier one. ``~`` is expanded in ``extra_paths``.
    """
    roots = [SkillRoot(bundled_root(), "package")]
    roots += [
        SkillRoot(Path(d) / "copilot" / "skills", "Jupyter data directory")
        for d in reversed(data_dirs)
    ]
    roots += [SkillRoot(Path(p).expanduser(), "CopilotApp.skills_paths") for p in extra_paths]
    return roots


class SkillLibrary:
    """The skills available to agents, by id."""

    def __init__(self, skills: dict[str, Skill]) -> None:
        for skill_id, skill in skills.items():
            if skill_id != skill.id:
                raise ValueError(f"skill {skill.id!r} is filed under {skill_id!r}")
        self._skills = dict(skills)

    @classmethod
    def load(cls, roots: list[SkillRoot], log: Logger) -> SkillLibrary:
        """Load every ``<root>/<folder>/SKILL.md``; a later root overrides an earlier one.

        Missing roots are skipped quietly. Files that cannot be read, are larger than
        `MAX_SKILL_BYTES`, are not UTF-8 or are malformed are skipped with a warning. Never
        raises for anything found on disk.
        """
        skills: dict[str, Skill] = {}
        origin: dict[str, str] = {}
        for root in roots:
            for skill in _load_root(root, log):
                if skill.id in skills:
                    was = origin[skill.id]
                    log.info("Skill %s from the %s replaces the %s one.", skill.id, root.label, was)
                skills[skill.id] = skill
                origin[skill.id] = root.label
        log.info("Skills available: %s", ", ".join(sorted(skills)) or "none")
        return cls(skills)

    def visible(self, agent: str) -> list[Skill]:
        """The skills this agent may see, sorted by id."""
        return [s for _, s in sorted(self._skills.items()) if s.visible_to(agent)]

    def summary(self, agent: str) -> str:
        """The ``<available-skills>`` block for the MCP server's instructions: no bodies."""
        lines = "".join(f"- {s.id}: {s.description}\n" for s in self.visible(agent))
        return _SUMMARY_HEAD + lines + _SUMMARY_TAIL

    def read(self, skill_id: str, agent: str) -> dict[str, Any]:
        """The ``skill_read`` result for one skill.

        Raises `Refusal` ``unknown-skill`` when there is no such skill or this agent may not
        see it; the two cases are indistinguishable on purpose.
        """
        skill = self._skills.get(skill_id)
        if skill is None or not skill.visible_to(agent):
            raise Refusal(
                "unknown-skill",
                "No skill with that id is available to this agent; the available skills are "
                "listed in the server's instructions.",
            )
        return skill.to_read_result()


def _load_root(root: SkillRoot, log: Logger) -> list[Skill]:
    """The well-formed skills of one root, in folder name order."""
    try:
        with os.scandir(root.path) as it:
            entries = sorted(e.name for e in it if e.is_dir() and not e.name.startswith("."))
    except FileNotFoundError:
        log.debug("No skills directory at %s (%s).", root.path, root.label)
        return []
    except OSError as e:
        log.warning("Skipped a skills directory from the %s: %s", root.label, _reason(e))
        log.debug("The skills directory that cannot be listed is %s.", root.path)
        return []
    skills = []
    for folder in entries:
        path = root.path / folder / SKILL_FILE
        if not os.path.lexists(path):
            continue
        try:
            skills.append(parse_skill(_read_text(path), folder))
        except (OSError, SkillError) as e:
            reason = _reason(e) if isinstance(e, OSError) else str(e)
            name = folder if folder.isprintable() else repr(folder)
            log.warning("Skipped skill %s/%s from the %s: %s", name, SKILL_FILE, root.label, reason)
            log.debug("The skipped skill file is %s.", path)
    return skills


def _read_text(path: Path) -> str:
    """The UTF-8 text of a skill file; `SkillError` when it is too large or not UTF-8."""
    if not path.is_file():  # a directory, a dangling link, or a FIFO that would block the read
        raise SkillError("the file cannot be read (not a regular file)")
    with open(path, "rb") as f:
        data = f.read(MAX_SKILL_BYTES + 1)
    if len(data) > MAX_SKILL_BYTES:
        raise SkillError(f"the file is larger than {MAX_SKILL_BYTES // 1024} KiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillError("the file is not UTF-8 text") from None


def _reason(e: OSError) -> str:
    """Why a file could not be read, without its path."""
    return f"cannot be read ({e.strerror or type(e).__name__})"
