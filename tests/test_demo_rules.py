"""The demo agent's rules on real cell sources: pure functions, no agent, no server."""

from __future__ import annotations

import ast

import pytest

from jupyter_copilot.demo_agent.rules import (
    add_docstrings,
    echo_word,
    explain,
    intent,
    note_for,
    sort_imports,
    split_lines,
)

NESTED = '''\
import os


@dataclass
class DataLoader(Base):
    # Loads things.

    @property
    def load_data(self, path):
        return os.listdir(path)

    class Inner:
        x = 1

    async def fetchHTTPResponse(self,
                                url):  # trailing comment
        """Already documented."""

        def helper():
            pass

        return helper


def __init__(self):
    value = 1  # keep me
'''

NESTED_DOCUMENTED = '''\
import os


@dataclass
class DataLoader(Base):
    """A data loader."""
    # Loads things.

    @property
    def load_data(self, path):
        """Load data."""
        return os.listdir(path)

    class Inner:
        """An inner."""
        x = 1

    async def fetchHTTPResponse(self,
                                url):  # trailing comment
        """Already documented."""

        def helper():
            """Helper."""
            pass

        return helper


def __init__(self):
    """Initialize the instance."""
    value = 1  # keep me
'''


def test_docstrings_are_added_to_every_undocumented_definition_and_nothing_else() -> None:
    assert add_docstrings(NESTED) == NESTED_DOCUMENTED


def test_docstrings_keep_crlf_line_endings() -> None:
    result = add_docstrings(NESTED.replace("\n", "\r\n"))
    assert result == NESTED_DOCUMENTED.replace("\n", "\r\n")
    assert "\n" not in result.replace("\r\n", "")


def test_docstring_goes_above_comments_and_blank_lines_at_the_top_of_the_body() -> None:
    source = "def train_model(x):\n\n    # TODO: faster\n    return x\n"
    assert add_docstrings(source) == (
        'def train_model(x):\n    """Train model."""\n\n    # TODO: faster\n    return x\n'
    )


def test_one_line_bodies_are_left_alone_and_the_result_parses() -> None:
    source = "def f(): return 1\nclass A: pass\nasync def g():\n    await f()\n"
    result = add_docstrings(source)
    assert (
        result == 'def f(): return 1\nclass A: pass\nasync def g():\n    """G."""\n    await f()\n'
    )
    ast.parse(result)
    assert add_docstrings("def f(): return 1\n") is None


def test_tabs_and_a_missing_final_newline_are_kept() -> None:
    assert (
        add_docstrings("def run_all():\n\treturn 1")
        == 'def run_all():\n\t"""Run all."""\n\treturn 1'
    )


def test_class_names_read_as_words_with_an_article() -> None:
    result = add_docstrings("class HTTPClient:\n    pass\nclass Item:\n    pass\n")
    assert result == (
        'class HTTPClient:\n    """A HTTP client."""\n    pass\n'
        'class Item:\n    """An item."""\n    pass\n'
    )


def test_documented_empty_and_unparseable_sources_give_none() -> None:
    assert add_docstrings('def f():\n    """Done."""\n    return 1\n') is None
    assert add_docstrings("x = 1\n") is None
    assert add_docstrings("") is None
    assert add_docstrings("def f(:\n    pass\n") is None


def test_cells_with_ipython_magics_still_get_docstrings() -> None:
    source = "%matplotlib inline\n!pip list\ndef plot_all(df):\n    return df.plot()\n"
    assert add_docstrings(source) == (
        '%matplotlib inline\n!pip list\ndef plot_all(df):\n    """Plot all."""\n'
        "    return df.plot()\n"
    )


@pytest.mark.parametrize("source", [NESTED, NESTED.replace("\n", "\r\n"), "x = 1\ry = 2\r"])
def test_split_lines_counts_lines_as_ast_does(source: str) -> None:
    lines = split_lines(source)
    assert "".join(lines) == source
    assert len(lines) == ast.parse(source).body[-1].end_lineno


IMPORTS = '''\
"""Module docstring."""
from __future__ import annotations
# Third party first, on purpose.
import sys
import os  # for paths
from collections import OrderedDict
import Bee

# Local
import zeta
from . import sibling
import alpha
import alpha
print(os, sys)
import later
'''

IMPORTS_SORTED = '''\
"""Module docstring."""
from __future__ import annotations
# Third party first, on purpose.
import Bee
from collections import OrderedDict
import os  # for paths
import sys

import alpha
# Local
import zeta
from . import sibling
print(os, sys)
import later
'''


def test_leading_imports_are_sorted_per_group_and_deduplicated() -> None:
    assert sort_imports(IMPORTS) == IMPORTS_SORTED


def test_sorted_imports_keep_crlf_and_multiline_statements() -> None:
    source = "import b\r\nfrom a import (\r\n    x,\r\n    y,\r\n)\r\nrun()\r\n"
    assert (
        sort_imports(source) == "from a import (\r\n    x,\r\n    y,\r\n)\r\nimport b\r\nrun()\r\n"
    )


def test_an_import_without_a_final_newline_can_move() -> None:
    assert sort_imports("import b\nimport a") == "import a\nimport b"


def test_import_before_from_for_the_same_module() -> None:
    assert sort_imports("from os import path\nimport os\n") == "import os\nfrom os import path\n"


def test_sorted_imports_give_none_when_nothing_changes_or_unsafe() -> None:
    assert sort_imports("import a\nimport b\n") is None
    assert sort_imports("import b; import a\n") is None
    assert sort_imports("x = 1\nimport b\nimport a\n") is None
    assert sort_imports("import (\n") is None
    assert sort_imports("") is None


def test_magics_at_the_top_stay_above_the_sorted_imports() -> None:
    source = "%matplotlib inline\nimport numpy as np\nimport matplotlib.pyplot as plt\n"
    assert sort_imports(source) == (
        "%matplotlib inline\nimport matplotlib.pyplot as plt\nimport numpy as np\n"
    )


def test_explanation_lists_what_the_syntax_tree_shows() -> None:
    source = (
        "import pandas as pd\nimport matplotlib.pyplot as plt\n\n"
        "class Model:\n    def fit(self, x):\n        return x\n\n"
        "def load_data(path):\n    return pd.read_csv(path)\n\n"
        "df = load_data('a.csv')\nfor c in df:\n    print(c)\nplt.plot(df)\ndf.head()\n"
    )
    text = explain(source)
    assert text.startswith("**This cell** has 15 lines of Python.")
    for fact in (
        "`pandas as pd`",
        "`load_data(path)`",
        "class `Model` with the methods `fit`",
        "Sets `df`",
        "`read_csv`",
        "Runs a loop",
        "Prints output",
        "Draws a plot",
        "`df.head()`, is shown",
    ):
        assert fact in text


def test_explanation_of_an_unparseable_cell_names_the_line() -> None:
    text = explain("x = 1\ndef f(:\n    pass\n")
    assert text.startswith("This cell does not parse as Python: line 2 (`def f(:`)")


def test_explanation_of_empty_and_markdown_cells() -> None:
    assert explain("  \n") == "This cell is empty."
    text = explain("# Results\nSome *text*.\n", "markdown")
    assert "Markdown cell of 2 lines" in text
    assert "`Results`" in text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Reply with the word received", "echo"),
        ("please REPLY WITH THE WORD pong.", "echo"),
        ("Add docstrings to this cell", "docstrings"),
        ("write a docstring", "docstrings"),
        ("Sort the imports", "sort-imports"),
        ("sort these please", "help"),
        ("Explain this cell", "explain"),
        ("What does this do?", "explain"),
        ("hello", "help"),
        ("", "help"),
        ("Add a cell that describes this", "add-note"),
        ("insert a note below", "add-note"),
        ("add a Markdown cell that explains it", "add-note"),
        ("add a cell", "help"),
        ("Address this, then explain it", "explain"),
        ("run this cell", "run"),
        ("Please execute it", "run"),
        ("rerun it", "help"),
        ("add a note that explains how to run it", "add-note"),
    ],
)
def test_intent_of_the_message(text: str, expected: str) -> None:
    assert intent(text) == expected


def test_a_note_describes_the_cell_above_in_markdown() -> None:
    assert note_for("import os\nx = 1\n") == (
        "### About the cell above\n\nThe cell above has 2 lines of Python.\n\n"
        "- Imports `os`.\n- Sets `x`.\n"
    )
    assert note_for("# Title\ntext", "markdown").startswith(
        "### About the cell above\n\nThe cell above is a Markdown cell of 2 lines"
    )
    assert note_for("  ") == "### About the cell above\n\nThe cell above is empty.\n"
    assert "does not parse" in note_for("def f(:\n")


def test_echo_word_is_the_word_asked_for() -> None:
    assert echo_word("Reply with the word received, thanks") == "received"
    assert echo_word("reply with a word") is None


@pytest.mark.parametrize(
    "source",
    [
        "@app.route('/x',\n           methods=['GET'])\ndef index():\n    return 'x'\n",
        'def f(a="""\n# not a comment\n"""):\n    return a\n',
        "class A:\n    def f(self): pass\n    def g(self):\n        x = 1; return x\n",
        "def f():\n    f'{1}'\n",
        "if True:\n    def f():\n        pass\nelse:\n    class B: ...\n",
        "def outer():\n    def inner(): return 1\n    return inner\n",
        "def f(x): \\\n    return x\n",
    ],
)
def test_docstrings_never_produce_code_that_does_not_parse(source: str) -> None:
    result = add_docstrings(source)
    if result is None:  # the backslash continuation: refusing is the safe answer
        assert source.startswith("def f(x): \\")
        return
    ast.parse(result)
    remaining = iter(split_lines(source))
    expected: str | None = next(remaining)
    for line in split_lines(result):
        if line == expected:
            expected = next(remaining, None)
        else:
            assert line.strip().startswith('"""') and line.strip().endswith('."""'), line
    assert expected is None


def test_a_run_summary_quotes_text_within_its_limit_and_names_the_rest_by_size() -> None:
    from jupyter_copilot.demo_agent.prompt import run_summary

    result = {
        "success": True,
        "executionCount": 2,
        "status": "ok",
        "outputs": [
            {"outputType": "stream", "name": "stdout", "text": "a" * 30},
            {"outputType": "execute_result", "executionCount": 2, "data": {
                "text/plain": {"text": "b" * 30}, "text/html": {"bytes": 99}}},
            {"outputType": "display_data", "data": {"image/png": {"bytes": 1234}}},
        ],
        "outputsOmitted": 2,
    }  # fmt: skip
    text = run_summary(result, limit=40)
    assert text.startswith("The cell ran (execution count 2).")
    assert "a" * 30 in text and "b" * 10 in text and "b" * 11 not in text
    assert "... and 20 more characters." in text
    assert "image/png (1234 bytes)" in text
    assert "2 more output(s) did not fit" in text
    # A fence inside an output cannot close the block it is quoted in.
    fenced_text = run_summary({**result, "outputs": [result["outputs"][0] | {"text": "```\n"}]})
    assert "````text" in fenced_text
    assert run_summary({"status": "aborted", "executionCount": None, "outputs": []}) == (
        "The run did not finish (the kernel stopped, restarted or was interrupted).\n\n"
        "It printed nothing.\n"
    )
