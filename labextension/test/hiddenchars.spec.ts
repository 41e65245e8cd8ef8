// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * Which characters cards and diffs show as escapes (hiddenchars.ts). That
 * Python reads the same list the same way is checked in
 * tests/test_hidden_characters.py.
 */

import { HiddenChars } from '../src/hiddenchars';

/** Every code point of the Unicode property, as Node's own data has it. */
function withProperty(property: RegExp): number[] {
  const found: number[] = [];
  for (let code = 0; code <= 0x10ffff; code++) {
    if (code >= 0xd800 && code <= 0xdfff) {
      continue;
    }
    if (property.test(String.fromCodePoint(code))) {
      found.push(code);
    }
  }
  return found;
}

const unseen = (codes: number[]) =>
  codes
    .filter(code => HiddenChars.kindOf(String.fromCodePoint(code)) === null)
    .map(code => code.toString(16));

describe('HiddenChars.kindOf', () => {
  it('calls exactly the direction controls bidi', () => {
    const bidi = [
      0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066,
      0x2067, 0x2068, 0x2069
    ];
    expect(withProperty(/\p{Bidi_Control}/u)).toEqual(bidi);
    const called = withProperty(/[^]/u).filter(
      code => HiddenChars.kindOf(String.fromCodePoint(code)) === 'bidi'
    );
    expect(called).toEqual(bidi);
  });

  it('hides every format and default-ignorable character', () => {
    expect(unseen(withProperty(/\p{Cf}/u))).toEqual([]);
    expect(unseen(withProperty(/\p{Default_Ignorable_Code_Point}/u))).toEqual(
      []
    );
    expect(unseen(withProperty(/[\p{Zl}\p{Zp}]/u))).toEqual([]);
  });

  it('hides every control character but tab and line feed', () => {
    expect(unseen(withProperty(/\p{Cc}/u))).toEqual(['9', 'a']);
    expect(HiddenChars.kindOf('\r')).toBe('control');
    expect(HiddenChars.kindOf('\u001b')).toBe('control');
  });

  it('leaves ordinary letters, spaces and right-to-left letters alone', () => {
    for (const char of ['a', ' ', '\u00a0', '\u05d0', '\u0627', '\u{1f600}']) {
      expect(HiddenChars.kindOf(char)).toBeNull();
    }
    expect(HiddenChars.kindOf('\u200b')).toBe('invisible');
    expect(HiddenChars.kindOf('\u{e0041}')).toBe('invisible');
  });
});

describe('HiddenChars.escape', () => {
  it('names the code point in four or more hex digits', () => {
    expect(HiddenChars.escape('\u202e')).toBe('\u27e8U+202E\u27e9');
    expect(HiddenChars.escape('\u0000')).toBe('\u27e8U+0000\u27e9');
    expect(HiddenChars.escape('\u{e0041}')).toBe('\u27e8U+E0041\u27e9');
  });

  it('escapes a Trojan Source line so that it reads in the order it runs', () => {
    const line =
      'access_level = "user\u202e \u2066// Check if admin\u2069 \u2066"';
    expect(HiddenChars.escaped(line)).toBe(
      'access_level = "user⟨U+202E⟩ ⟨U+2066⟩// Check if admin⟨U+2069⟩ ⟨U+2066⟩"'
    );
    expect(HiddenChars.find(line)).toEqual([
      '\u202e',
      '\u2066',
      '\u2069',
      '\u2066'
    ]);
  });

  it('finds nothing in ordinary text, tabs and new lines included', () => {
    expect(HiddenChars.find('def f(x):\n\treturn x  # ok\n')).toEqual([]);
    expect(HiddenChars.escaped('a\tb\n')).toBe('a\tb\n');
  });
});

describe('HiddenChars.segments', () => {
  it('cuts a text into plain pieces and hidden characters, losing nothing', () => {
    const text = 'X=#\u200b touch\u{e0020}BIDI\u202e\u202e.txt';
    const parts = HiddenChars.segments(text);
    expect(parts).toEqual([
      { text: 'X=#', kind: null },
      { text: '\u200b', kind: 'invisible' },
      { text: ' touch', kind: null },
      { text: '\u{e0020}', kind: 'invisible' },
      { text: 'BIDI', kind: null },
      { text: '\u202e', kind: 'bidi' },
      { text: '\u202e', kind: 'bidi' },
      { text: '.txt', kind: null }
    ]);
    expect(parts.map(p => p.text).join('')).toBe(text);
    expect(HiddenChars.segments('')).toEqual([]);
    expect(HiddenChars.segments('\u0007')).toEqual([
      { text: '\u0007', kind: 'control' }
    ]);
  });

  it('gives a fresh expression each time, safe to use with the g flag', () => {
    const first = HiddenChars.regExp();
    expect(first.flags).toBe('gu');
    first.exec('a\u200bb');
    expect(HiddenChars.regExp().lastIndex).toBe(0);
  });
});
