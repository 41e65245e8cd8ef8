// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * Where a streaming Markdown reply can be cut into blocks that no later text
 * changes, so that each is rendered once and only the open tail again.
 *
 * A cut is made after a blank line outside a fenced code block, when the next
 * line has begun and does not start with white space (which could continue a
 * list item or an indented code block). Pure: no DOM.
 */

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const CLOSING = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;
const BLANK = /^[ \t]*$/;

/**
 * The end of the settled part of `text`: `text.slice(0, end)` is whole
 * blocks. Scanning starts at `from`, an earlier result for a prefix of the
 * same text (a cut is always outside a fence), so each character is looked
 * at about once while a reply grows.
 */
export function settledEnd(text: string, from = 0): number {
  let end = from;
  let fence: string | null = null;
  let afterBlank = false;
  let start = from;
  for (;;) {
    const newline = text.indexOf('\n', start);
    const line = text.slice(start, newline < 0 ? text.length : newline);
    if (fence === null && afterBlank && line !== '' && !/^[ \t]/.test(line)) {
      end = start;
    }
    if (newline < 0) {
      // The last line may still grow: it only ever ends a blank run above.
      return end;
    }
    if (fence === null) {
      const opening = FENCE.exec(line);
      fence = opening ? opening[1] : null;
      afterBlank = !opening && BLANK.test(line);
    } else {
      const closing = CLOSING.exec(line);
      if (
        closing &&
        closing[1][0] === fence[0] &&
        closing[1].length >= fence.length
      ) {
        fence = null;
      }
      afterBlank = false;
    }
    start = newline + 1;
  }
}
