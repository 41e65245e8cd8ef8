// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * The page's own UTF-8 helpers (hash.ts). That `sourceHash` gives Python's
 * hash is checked on shared vectors in tests/test_hash.py.
 */

import { isWellFormed, sourceHash, utf8Length } from '../src/hash';

describe('utf8Length', () => {
  it('counts UTF-8 bytes as TextEncoder does, lone surrogates included', () => {
    const texts = [
      '',
      'a',
      '\u00e9',
      '\u20ac',
      '\u{1f600}',
      'a\ud800b',
      '\udc00',
      'x\u{1f600}\u00e9'
    ];
    expect(texts.map(utf8Length)).toEqual(
      texts.map(t => new TextEncoder().encode(t).length)
    );
  });
});

describe('isWellFormed', () => {
  it('is false for a lone surrogate only', () => {
    expect(
      ['', 'a', '\u{1f600}', '\ud800', 'a\udc00', '\udc00\ud800'].map(
        isWellFormed
      )
    ).toEqual([true, true, true, false, false, false]);
  });
});

describe('sourceHash', () => {
  it('does not normalise line ends or Unicode forms', () => {
    expect(sourceHash('a\r\n')).not.toBe(sourceHash('a\n'));
    expect(sourceHash('cafe\u0301')).not.toBe(sourceHash('caf\u00e9'));
    expect(sourceHash('')).toBe(
      'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
    );
  });
});
