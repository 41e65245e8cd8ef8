"""The page's own checks and Keep's replacement, run as compiled TypeScript in Node."""

from __future__ import annotations

from typing import Any

from jupyter_copilot.context import source_hash
from tests.node_harness import run_node

OLD = "x = 1\n"

CHECKS = """
const { checkProposal, parseProposal } = await import(`${LIB}/review/checks.js`);
const out = input.map(c => {
  const proposal = parseProposal(c.data);
  if (!proposal) return 'unparsable';
  const failure = checkProposal(proposal, c.path, c.cell);
  return failure ? failure.code : null;
});
console.log(JSON.stringify(out));
"""

REPLACE = """
const { replacement } = await import(`${LIB}/review/checks.js`);
console.log(JSON.stringify(input.map(([a, b]) => {
  const r = replacement(a, b);
  return a.slice(0, r.start) + r.text + a.slice(r.end);
})));
"""


def case(*, path: str = "a.ipynb", cell: Any = "default", **data: Any) -> dict[str, Any]:
    proposal = {
        "callId": "c",
        "artifactId": "nb",
        "path": "a.ipynb",
        "cellId": "c1",
        "expectedSourceHash": source_hash(OLD),
        "newSource": "x = 2\n",
        "expectedCellType": "code",
    }
    proposal.update(data)
    if cell == "default":
        cell = {"cellType": "code", "editable": True, "source": OLD}
    return {"data": proposal, "path": path, "cell": cell}


def test_the_page_checks_in_the_contract_order() -> None:
    stale = {"cellType": "code", "editable": True, "source": "x = 3\n"}
    locked_stale = {"cellType": "code", "editable": False, "source": "x = 3\n"}
    retyped_stale = {"cellType": "markdown", "editable": True, "source": "x = 3\n"}
    cases = {
        "ok": case(),
        "untyped ok": case(expectedCellType=None, cell={**stale, "source": OLD}),
        "wrong path and stale": case(path="b.ipynb", cell=stale),
        "missing": case(cell=None),
        "locked and stale": case(cell=locked_stale),
        "retyped and stale": case(cell=retyped_stale),
        "stale": case(cell=stale),
        "editable missing is not locked": case(cell={"cellType": "code", "source": OLD}),
        "bad data": case(newSource=5),
    }
    got = dict(zip(cases, run_node(CHECKS, list(cases.values())), strict=True))
    assert got == {
        "ok": None,
        "untyped ok": None,
        "wrong path and stale": "artifact-mismatch",
        "missing": "cell-not-found",
        "locked and stale": "cell-locked",
        "retyped and stale": "cell-type-mismatch",
        "stale": "stale-source",
        "editable missing is not locked": None,
        "bad data": "unparsable",
    }


def test_keeps_replacement_always_yields_exactly_the_new_source() -> None:
    pairs = [
        ("", "a"),
        ("a", ""),
        ("same", "same"),
        ("x = 1\n", "x = 2\n"),
        ("abc", "abxbc"),
        ("\U0001f600a", "\U0001f601a"),
        ("a\U0001f600", "a\U0001f601"),
        ("aaaa", "aa"),
        ("line\r\nnext", "line\nnext"),
        ("e\u0301", "\u00e9"),
    ]
    assert run_node(REPLACE, pairs) == [b for _, b in pairs]
