"""Where a streaming reply is cut into blocks rendered once each (``chat/blocks.ts`` in Node)."""

from __future__ import annotations

from tests.node_harness import run_node

SETTLED = """
const { settledEnd } = await import(`${LIB}/chat/blocks.js`);
console.log(JSON.stringify(input.map(t => {
  // Growing the text one character at a time, each scan starting at the last cut,
  // must give the same cuts as scanning each prefix whole.
  let from = 0;
  const grown = [];
  for (let i = 0; i <= t.length; i++) {
    from = settledEnd(t.slice(0, i), from);
    grown.push(from);
  }
  const whole = [...Array(t.length + 1).keys()].map(i => settledEnd(t.slice(0, i)));
  return { end: settledEnd(t), same: JSON.stringify(grown) === JSON.stringify(whole) };
})));
"""

CASES = {
    # text: the settled prefix
    "one paragraph, still open": ("Hello\nworld", ""),
    "a blank line alone is not a cut yet": ("Hello\n\n", ""),
    "the next block has begun": ("Hello\n\nNext", "Hello\n\n"),
    "blank lines inside a fence are no cut": ("```\na\n\nb\n", ""),
    "a fence closed, then a block": ("```py\na\n\nb\n```\n\nNext", "```py\na\n\nb\n```\n\n"),
    "an info string does not close a fence": ("```\n```py\n\nx", ""),
    "tildes close tildes only": ("~~~\n```\n\nx\n~~~\n\ny", "~~~\n```\n\nx\n~~~\n\n"),
    "an indented line may continue a list item": ("- a\n\n  more\n", ""),
    "a new list item is a new block": ("- a\n\n- b", "- a\n\n"),
    "several blocks": ("a\n\nb\n\nc\n\nd", "a\n\nb\n\nc\n\n"),
    "blank lines with spaces count": ("a\n  \nb", "a\n  \n"),
}


def test_settled_end_cuts_only_where_no_later_text_changes_the_blocks() -> None:
    results = run_node(SETTLED, [text for text, _ in CASES.values()])
    for (name, (text, settled)), result in zip(CASES.items(), results, strict=True):
        assert text[: result["end"]] == settled, name
        assert result["same"], name
