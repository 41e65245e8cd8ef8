"""The Markdown pages as a reader finds them: every screenshot shown, every link alive, and no
sentence that contradicts the tool list.

Each check is a pure function of a folder, so that a small bad sample in ``tmp_path`` proves it
can fail without breaking the real docs. Fast: no server, no browser.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

from jupyter_copilot.protocol.vocabulary import WRITE_TOOLS

REPO = Path(__file__).resolve().parent.parent
VOCABULARY = REPO / "jupyter_copilot" / "schemas" / "vocabulary.json"

#: Counts written in words, as the docs would write them.
NUMBER_WORDS = {
    "one": 1,
    "only": 1,
    "single": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}

#: "one write tool", "3 notebook tools", "the only write tool", "two write-tools".
TOOL_COUNT = re.compile(
    r"\b(" + "|".join(NUMBER_WORDS) + r"|\d+)[\s-]+(write|notebook)[\s-]+tools?\b",
    re.IGNORECASE,
)
NO_TOOL = re.compile(r"no\s+tool\s+does\s+it", re.IGNORECASE)
#: What the notebook tools do, near which "no tool does it" is false.
TOOL_ACTIONS = re.compile(r"\b(run(ning|s)?|execut\w*|add(ing|s)?|insert\w*)\b", re.IGNORECASE)

FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
#: ``[text](target)`` and ``![alt](target "title")``; the target may be in angle brackets.
MD_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML_LINK = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)=[\"']([^\"']+)[\"']", re.IGNORECASE)
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$", re.MULTILINE)
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp"}


def markdown_files(root: Path) -> list[Path]:
    """The Markdown pages a reader of the repository meets."""
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    pages += [root / "CONTRIBUTING.md", root / "CHANGELOG.md"]
    return [page for page in pages if page.is_file()]


def prose(text: str) -> str:
    """``text`` without code blocks and inline code, where names are not links or claims.

    Blanked rather than removed, so that positions and line counts stay as they were.
    """

    def blank(match: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", match.group(0))

    return INLINE_CODE.sub(blank, FENCE.sub(blank, text))


def link_targets(text: str) -> list[str]:
    """Every link and image target of a page, outside code."""
    plain = prose(text)
    return [m.group(1) for m in MD_LINK.finditer(plain)] + [
        m.group(1) for m in HTML_LINK.finditer(plain)
    ]


def is_external(target: str) -> bool:
    """Whether ``target`` leaves the repository (a web address, mail, another scheme)."""
    return re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) is not None or target.startswith("//")


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text lowercased, punctuation dropped, spaces
    made hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    # HTML tags go, but inside code ``<id>`` is text.
    parts = text.split("`")
    text = "".join(part if i % 2 else re.sub(r"<[^>]+>", "", part) for i, part in enumerate(parts))
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors of a page's headings (outside code), with GitHub's ``-1``, ``-2`` for
    repeats, and any explicit ``id``/``name`` attributes."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    plain = FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    for match in HEADING.finditer(plain):
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    found.update(re.findall(r"<[^>]+\b(?:id|name)=[\"']([^\"']+)[\"']", plain))
    return found


def broken_links(root: Path) -> list[str]:
    """Relative links of the Markdown pages to a file or an anchor that does not exist."""
    problems: list[str] = []
    for page in markdown_files(root):
        text = page.read_text(encoding="utf-8")
        for target in link_targets(text):
            if not target or is_external(target):
                continue
            path_part, _, anchor = target.partition("#")
            path_part = path_part.split("?", 1)[0]
            where = f"{page.relative_to(root)}: ({target})"
            file = (page.parent / path_part).resolve() if path_part else page
            if not file.exists():
                problems.append(f"{where}: no such file")
            elif (
                anchor
                and file.suffix == ".md"
                and anchor not in anchors(file.read_text(encoding="utf-8"))
            ):
                problems.append(f"{where}: no such heading")
    return problems


def unreferenced_images(root: Path) -> list[str]:
    """Images in docs/images that no Markdown page of the repository shows or links."""
    images = root / "docs" / "images"
    if not images.is_dir():
        return []
    referenced: set[Path] = set()
    for page in markdown_files(root):
        for target in link_targets(page.read_text(encoding="utf-8")):
            if target and not is_external(target):
                path_part = target.partition("#")[0].split("?", 1)[0]
                referenced.add((page.parent / path_part).resolve())
    return sorted(
        image.name
        for image in images.iterdir()
        if image.suffix.lower() in IMAGE_SUFFIXES and image.resolve() not in referenced
    )


def tool_contradictions(root: Path, write_tools: int) -> list[str]:
    """Sentences of the Markdown pages that contradict the tool list: a count of write or
    notebook tools other than ``write_tools``, or "no tool does it" said of running code or
    adding cells."""
    problems: list[str] = []
    for page in markdown_files(root):
        text = prose(page.read_text(encoding="utf-8"))
        name = page.relative_to(root)
        for match in TOOL_COUNT.finditer(text):
            word = match.group(1).lower()
            count = NUMBER_WORDS[word] if word in NUMBER_WORDS else int(word)
            if count != write_tools:
                line = text.count("\n", 0, match.start()) + 1
                problems.append(f"{name}:{line}: {match.group(0)!r} (there are {write_tools})")
        for match in NO_TOOL.finditer(text):
            near = _surroundings(text, match.start(), match.end())
            if TOOL_ACTIONS.search(near):
                line = text.count("\n", 0, match.start()) + 1
                problems.append(f"{name}:{line}: {match.group(0)!r} next to {near.strip()!r}")
    return problems


def unexplained_refusals(page: Path, codes: Iterable[str]) -> list[str]:
    """The refusal codes that ``page`` never names in inline code."""
    named = set(re.findall(r"`([a-z-]+)`", page.read_text(encoding="utf-8")))
    return sorted(set(codes) - named)


def _surroundings(text: str, start: int, end: int) -> str:
    """What a phrase at ``start:end`` is said of: its table row, or else its line and the
    line before it (a sentence wrapped over two lines)."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line = text[line_start : len(text) if line_end < 0 else line_end]
    if line.lstrip().startswith("|") or line_start == 0:
        return line
    before = text[text.rfind("\n", 0, line_start - 1) + 1 : line_start - 1]
    return line if before.lstrip().startswith("|") else before + "\n" + line


# -- the repository ------------------------------------------------------------------------


def test_every_image_in_docs_images_is_shown_by_some_page():
    assert unreferenced_images(REPO) == []


def test_no_page_contradicts_the_number_of_write_tools():
    assert tool_contradictions(REPO, len(WRITE_TOOLS)) == []


def test_every_relative_link_reaches_a_file_and_heading_that_exist():
    assert broken_links(REPO) == []


def test_the_help_pages_are_linked_from_the_readme():
    readme = link_targets((REPO / "README.md").read_text(encoding="utf-8"))
    assert "docs/troubleshooting.md" in readme
    assert "docs/glossary.md" in readme


def test_troubleshooting_explains_every_refusal_code_a_person_can_meet():
    codes = json.loads(VOCABULARY.read_text(encoding="utf-8"))["refusalCodes"]
    assert unexplained_refusals(REPO / "docs" / "troubleshooting.md", codes) == []


# -- each check fails on a bad sample -------------------------------------------------------


def _repo(tmp_path: Path, pages: dict[str, str], images: tuple[str, ...] = ()) -> Path:
    for name, text in pages.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    for image in images:
        (tmp_path / "docs" / "images").mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / "images" / image).write_bytes(b"\x89PNG\r\n\x1a\n")
    return tmp_path


def test_an_image_no_page_shows_is_reported(tmp_path):
    root = _repo(
        tmp_path,
        {
            "README.md": "![shown](docs/images/shown.png)\n",
            "docs/guide.md": "In code only: `![x](images/in-code.png)`\n",
        },
        images=("shown.png", "forgotten.png", "in-code.png"),
    )
    assert unreferenced_images(root) == ["forgotten.png", "in-code.png"]


def test_an_image_shown_from_a_guide_by_an_html_tag_counts(tmp_path):
    root = _repo(
        tmp_path,
        {"README.md": "", "docs/guide.md": '<img src="images/a.png" alt="a">\n'},
        images=("a.png",),
    )
    assert unreferenced_images(root) == []


def test_a_wrong_count_of_write_or_notebook_tools_is_reported(tmp_path):
    root = _repo(
        tmp_path,
        {
            "README.md": "- **One write tool, always reviewed.**\n",
            "docs/a.md": "The agent gets two notebook tools.\nIt has 3 write tools.\n",
            "CHANGELOG.md": "The only write tool.\n",
        },
    )
    problems = tool_contradictions(root, 3)
    assert len(problems) == 3, problems
    assert problems[0].startswith("README.md:1: 'One write tool'")
    assert "'two notebook tools'" in problems[1]
    assert "'only write tool'" in problems[2]
    assert tool_contradictions(root, 1) != []


def test_no_tool_does_it_next_to_running_or_adding_cells_is_reported(tmp_path):
    table = (
        "| | us | them |\n|---|---|---|\n"
        "| Running code, adding or deleting cells | no tool does it | available as tools |\n"
    )
    prose_text = "Agents cannot run code or add\ncells: no tool does it.\n"
    # A row of its own is judged alone, not by the row above it.
    deleting = "| Adding a cell | a pending cell |\n| Deleting cells | no tool does it |\n"
    root = _repo(tmp_path, {"README.md": table, "docs/a.md": prose_text, "docs/b.md": deleting})
    problems = tool_contradictions(root, 3)
    assert [p.split(": ", 1)[0] for p in problems] == ["README.md:3", "docs/a.md:2"], problems


def test_a_count_inside_code_is_not_a_claim(tmp_path):
    root = _repo(tmp_path, {"README.md": "```text\none write tool\n```\nSay `two write tools`.\n"})
    assert tool_contradictions(root, 3) == []


def test_a_link_to_a_missing_file_or_heading_is_reported(tmp_path):
    root = _repo(
        tmp_path,
        {
            "README.md": (
                "[ok](docs/a.md#the-kill-switch) [web](https://example.org/x)\n"
                "[gone](docs/missing.md) [no heading](docs/a.md#nowhere)\n"
                "[here](#quick-start) [not here](#slow-start)\n"
                "## Quick start\n"
            ),
            "docs/a.md": "# A\n\n## The kill switch\n\n```\n# not a heading\n```\n",
        },
    )
    assert broken_links(root) == [
        "README.md: (docs/missing.md): no such file",
        "README.md: (docs/a.md#nowhere): no such heading",
        "README.md: (#slow-start): no such heading",
    ]
    (root / "docs" / "b.md").write_text("[code heading](a.md#not-a-heading)\n", encoding="utf-8")
    assert broken_links(root)[-1] == "docs/b.md: (a.md#not-a-heading): no such heading"


def test_anchors_follow_githubs_rules_for_code_punctuation_and_repeats():
    text = (
        "## 11.1 Inserting a cell (`notebook_insert_cell`)\n"
        "### `GET conversations`, `GET conversations/<id>`\n"
        "## Agents' own tools\n## Notes\n## Notes\n"
    )
    assert anchors(text) == {
        "111-inserting-a-cell-notebook_insert_cell",
        "get-conversations-get-conversationsid",
        "agents-own-tools",
        "notes",
        "notes-1",
    }


def test_a_refusal_code_the_page_does_not_name_is_reported(tmp_path):
    page = tmp_path / "troubleshooting.md"
    page.write_text("| `stale-source` | The cell changed. |\nblocked, in prose only\n")
    assert unexplained_refusals(page, ["stale-source", "blocked", "timeout"]) == [
        "blocked",
        "timeout",
    ]
