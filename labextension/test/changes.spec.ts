// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * Which reviews the panel's Changes list shows (changes/list.ts).
 */

import { english } from './translation';

import {
  IChange,
  openCallIds,
  stateText,
  turnChanges
} from '../src/changes/list';
import { parseEnded } from '../src/changes/reloaded';

function change(callId: string, state: string, openedAt: number): IChange {
  return {
    callId,
    kind: 'edit',
    path: 'a.ipynb',
    cellId: 'c1',
    state,
    openedAt
  };
}

const ENTRIES = [
  change('old-open', 'open', 1),
  change('old-kept', 'keep', 2),
  change('new-kept', 'keep', 10),
  change('new-open', 'open', 11),
  change('new-conflict', 'conflict', 12)
];

describe('turnChanges', () => {
  it('shows the turn since it started, and anything older still open', () => {
    expect(turnChanges(ENTRIES, 10).map(c => c.callId)).toEqual([
      'old-open',
      'new-kept',
      'new-open',
      'new-conflict'
    ]);
  });

  it('shows only the open ones before any turn', () => {
    expect(turnChanges(ENTRIES, null).map(c => c.callId)).toEqual([
      'old-open',
      'new-open'
    ]);
  });
});

describe('openCallIds', () => {
  it('gives Keep all and Undo all only the open reviews', () => {
    expect(openCallIds(turnChanges(ENTRIES, 10))).toEqual([
      'old-open',
      'new-open'
    ]);
  });
});

describe('stateText', () => {
  it('has words for every state a review can end in', () => {
    const trans = english;
    const states = [
      'open',
      'keep',
      'undo',
      'conflict',
      'superseded',
      'withdrawn',
      'aborted',
      'reloaded'
    ];
    const words = states.map(s => stateText(s, trans));
    expect(new Set(words).size).toBe(states.length);
    expect(words).toContain('not applied: the cell changed');
    expect(stateText('open', english)).toBe('waiting for you');
  });
});

describe('a change decided in the turn', () => {
  it('stays in the list once the list showed it', () => {
    const shown = new Set(['old-open']);
    const decided = ENTRIES.map(e =>
      e.callId === 'old-open' ? { ...e, state: 'undo' } : e
    );
    expect(turnChanges(decided, 10, shown).map(c => c.callId)).toEqual([
      'old-open',
      'new-kept',
      'new-open',
      'new-conflict'
    ]);
    expect(turnChanges(decided, 10).map(c => c.callId)).not.toContain(
      'old-open'
    );
  });
});

describe('parseEnded', () => {
  it('reads the reviews a reloaded page left open, and nothing malformed', () => {
    const raw = JSON.stringify([
      { callId: 'a', kind: 'edit', path: 'a.ipynb', cellId: 'c1' },
      { callId: 'b', kind: 'insert', path: 'a.ipynb', cellId: null },
      { callId: 'c', kind: 'delete', path: 'a.ipynb', cellId: 'c1' },
      { callId: 7 }
    ]);
    const ended = parseEnded(raw, 5);
    expect(ended.map(c => [c.callId, c.state, c.openedAt])).toEqual([
      ['a', 'reloaded', 5],
      ['b', 'reloaded', 5]
    ]);
    expect(parseEnded('not json', 1)).toEqual([]);
    expect(parseEnded(null, 1)).toEqual([]);
  });
});
