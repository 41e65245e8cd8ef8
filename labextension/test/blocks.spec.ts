// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * Where a streaming reply is cut into blocks rendered once each (chat/blocks.ts).
 */

import { settledEnd } from '../src/chat/blocks';

// text: the settled prefix
const CASES: Record<string, [string, string]> = {
  'one paragraph, still open': ['Hello\nworld', ''],
  'a blank line alone is not a cut yet': ['Hello\n\n', ''],
  'the next block has begun': ['Hello\n\nNext', 'Hello\n\n'],
  'blank lines inside a fence are no cut': ['```\na\n\nb\n', ''],
  'a fence closed, then a block': [
    '```py\na\n\nb\n```\n\nNext',
    '```py\na\n\nb\n```\n\n'
  ],
  'an info string does not close a fence': ['```\n```py\n\nx', ''],
  'tildes close tildes only': [
    '~~~\n```\n\nx\n~~~\n\ny',
    '~~~\n```\n\nx\n~~~\n\n'
  ],
  'an indented line may continue a list item': ['- a\n\n  more\n', ''],
  'a new list item is a new block': ['- a\n\n- b', '- a\n\n'],
  'several blocks': ['a\n\nb\n\nc\n\nd', 'a\n\nb\n\nc\n\n'],
  'blank lines with spaces count': ['a\n  \nb', 'a\n  \n']
};

describe('settledEnd', () => {
  it.each(Object.entries(CASES))(
    'cuts only where no later text changes the blocks: %s',
    (_name, [text, settled]) => {
      expect(text.slice(0, settledEnd(text))).toBe(settled);
      // Growing the text one character at a time, each scan starting at the last cut,
      // must give the same cuts as scanning each prefix whole.
      let from = 0;
      const grown: number[] = [];
      for (let i = 0; i <= text.length; i++) {
        from = settledEnd(text.slice(0, i), from);
        grown.push(from);
      }
      const whole = [...Array(text.length + 1).keys()].map(i =>
        settledEnd(text.slice(0, i))
      );
      expect(grown).toEqual(whole);
    }
  );
});
