// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * What Keep applies after parts of an edit were kept or dropped
 * (review/hunks.ts), with the parts the merge view finds.
 */

import { getChunks, unifiedMergeView } from '@codemirror/merge';
import { EditorState } from '@codemirror/state';

import {
  chosenSource,
  endingChange,
  HunkDecision,
  hunkCounts,
  IHunk,
  withFinalBreak
} from '../src/review/hunks';

/** The parts of the diff the review shows of `a` against `b`. */
function parts(a: string, b: string): IHunk[] {
  const state = EditorState.create({
    doc: withFinalBreak(b),
    extensions: [unifiedMergeView({ original: withFinalBreak(a) })]
  });
  return [...(getChunks(state)?.chunks ?? [])];
}

function decide(hunks: IHunk[], ...ds: (HunkDecision | null)[]) {
  const map = new Map<number, HunkDecision>();
  ds.forEach((d, i) => d && map.set(hunks[i].fromB, d));
  return map;
}

const OLD = 'a = 1\nb = 2\nc = 3\nd = 4\ne = 5\nf = 6\ng = 7\nh = 8\ni = 9\n';
const NEW =
  'a = 10\nb = 2\nc = 3\nd = 4\ne = 50\nf = 6\ng = 7\nh = 8\ni = 90\n';

describe('chosenSource', () => {
  it('applies the proposal as it came when nothing is dropped', () => {
    const hunks = parts(OLD, NEW);
    expect(hunks).toHaveLength(3);
    expect(chosenSource(OLD, NEW, hunks, decide(hunks, 'keep'))).toBeNull();
  });

  it('puts each dropped part back as the cell has it', () => {
    const hunks = parts(OLD, NEW);
    expect(chosenSource(OLD, NEW, hunks, decide(hunks, null, 'drop'))).toBe(
      NEW.replace('e = 50', 'e = 5')
    );
    expect(
      chosenSource(OLD, NEW, hunks, decide(hunks, 'drop', null, 'drop'))
    ).toBe(OLD.replace('e = 5', 'e = 50'));
  });

  it('gives the cell back whole when every part is dropped', () => {
    const hunks = parts('import os', 'import os\nimport sys\n');
    expect(
      chosenSource(
        'import os',
        'import os\nimport sys\n',
        hunks,
        decide(hunks, 'drop')
      )
    ).toBe('import os');
  });

  it('ends as the last line it keeps', () => {
    const a = 'x = 1\ny = 2\nz = 3';
    const b = 'x = 10\ny = 2\nz = 30\n';
    const hunks = parts(a, b);
    expect(hunks).toHaveLength(2);
    // The last part dropped: the cell's last line, without a line break.
    expect(chosenSource(a, b, hunks, decide(hunks, null, 'drop'))).toBe(
      'x = 10\ny = 2\nz = 3'
    );
    // The first dropped: the proposal's last line, with its line break.
    expect(chosenSource(a, b, hunks, decide(hunks, 'drop'))).toBe(
      'x = 1\ny = 2\nz = 30\n'
    );
  });
});

describe('the parts of a diff', () => {
  it('never show a line removed and added the same for a final line break', () => {
    const hunks = parts('import os', 'import os\nimport sys\n');
    expect(hunks).toHaveLength(1);
    // Nothing of the cell's text is removed: "import sys" is added.
    expect(hunks[0].fromA).toBe(hunks[0].toA);
    expect(parts('import os', 'import os\n')).toHaveLength(0);
  });
});

describe('endingChange', () => {
  it('says how the final line break changes', () => {
    expect(endingChange('a', 'a\n')).toBe('added');
    expect(endingChange('a\n', 'a')).toBe('removed');
    expect(endingChange('a\n', 'b\n')).toBeNull();
    expect(endingChange('', 'b\n')).toBeNull();
  });
});

describe('hunkCounts', () => {
  it('counts kept, dropped and open parts', () => {
    const hunks = parts(OLD, NEW);
    expect(hunkCounts(hunks, decide(hunks, 'keep', 'drop'))).toEqual({
      kept: 1,
      dropped: 1,
      open: 1
    });
  });
});
