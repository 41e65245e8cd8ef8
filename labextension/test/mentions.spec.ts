// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * The `@` of the composer (chat/mentions.ts): which typed text opens the
 * menu, what it offers first, and what is left of the text once a chip
 * stands for the mention.
 */

import {
  IMention,
  matchMentions,
  mentionAt,
  removeMention
} from '../src/chat/mentions';

const variable = (name: string): IMention => ({
  kind: 'variable',
  key: name,
  label: name,
  detail: 'int'
});

describe('mentionAt', () => {
  it('finds an @ at the start of the text and after a space', () => {
    expect(mentionAt('@df', 3)).toEqual({ start: 0, query: 'df' });
    expect(mentionAt('plot @d', 7)).toEqual({ start: 5, query: 'd' });
    expect(mentionAt('plot\n@', 6)).toEqual({ start: 5, query: '' });
  });

  it('reads only up to the caret', () => {
    expect(mentionAt('see @dfx now', 7)).toEqual({ start: 4, query: 'df' });
  });

  it('is no mention inside a word, after a space, or past the caret', () => {
    expect(mentionAt('mail a@b.org', 12)).toBeNull();
    expect(mentionAt('@df and', 7)).toBeNull();
    expect(mentionAt('@df', 0)).toBeNull();
    expect(mentionAt('no at here', 10)).toBeNull();
  });

  it('gives up on a query longer than a name can be', () => {
    const long = '@' + 'x'.repeat(100);
    expect(mentionAt(long, long.length)).toBeNull();
  });
});

describe('matchMentions', () => {
  const offered = [
    variable('model_df'),
    variable('df_raw'),
    variable('df'),
    variable('total'),
    { kind: 'file', key: 'data/sales.csv', label: 'sales.csv', detail: '' },
    { kind: 'cell', key: 'cell 2', label: 'Cell 2', detail: 'df = load()' }
  ] as IMention[];

  it('puts keys that start with the query first, shorter first', () => {
    expect(matchMentions(offered, 'df').map(m => m.key)).toEqual([
      'df',
      'df_raw',
      'model_df'
    ]);
  });

  it('matches a part of a path or name, and ignores case', () => {
    expect(matchMentions(offered, 'SAL').map(m => m.key)).toEqual([
      'data/sales.csv'
    ]);
    expect(matchMentions(offered, 'cell').map(m => m.label)).toEqual([
      'Cell 2'
    ]);
  });

  it('offers everything, in order, for an empty query, up to the limit', () => {
    expect(matchMentions(offered, '', 3).map(m => m.key)).toEqual([
      'df',
      'total',
      'df_raw'
    ]);
  });

  it('offers nothing that does not hold the query', () => {
    expect(matchMentions(offered, 'zzz')).toEqual([]);
  });
});

describe('removeMention', () => {
  it('takes the @query and the space after it out of the text', () => {
    expect(removeMention('@df sum it', { start: 0, query: 'df' }, 3)).toEqual({
      text: 'sum it',
      caret: 0
    });
    expect(removeMention('plot @df now', { start: 5, query: 'df' }, 8)).toEqual(
      { text: 'plot now', caret: 5 }
    );
  });

  it('keeps the rest of the text as it is', () => {
    expect(removeMention('plot @d', { start: 5, query: 'd' }, 7)).toEqual({
      text: 'plot ',
      caret: 5
    });
  });
});
