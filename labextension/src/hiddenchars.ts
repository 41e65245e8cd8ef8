// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { HiddenCharacter } from './generated/vocabulary';
import {
  HIDDEN_CHARACTER_RANGES,
  HIDDEN_CHARACTERS
} from './generated/vocabulary.js';

/**
 * Characters that change how text reads without being seen: direction
 * controls (Trojan Source), zero-width and other format characters, and
 * control characters other than tab and line feed. Every card and every
 * diff shows each of them as a visible escape, `⟨U+202E⟩`, in a style of
 * its own (docs/security.md, "Cards and diffs").
 *
 * Which characters these are is the vocabulary's `hiddenCharacters`, the
 * list the server reads too. Pure: no DOM.
 */
export namespace HiddenChars {
  /**
   * A piece of text: plain text, or one hidden character and its kind.
   */
  export interface ISegment {
    /** The text; for a hidden character, that one character. */
    readonly text: string;
    /** The character's kind, `null` for plain text. */
    readonly kind: HiddenCharacter | null;
  }

  /**
   * A new expression matching one hidden character (flags `gu`, as
   * CodeMirror's `highlightSpecialChars` wants them).
   */
  export function regExp(): RegExp {
    return new RegExp(Private.SOURCE, 'gu');
  }

  /**
   * The kind of a character, `null` when it is an ordinary one.
   *
   * @param char - One character (one code point).
   */
  export function kindOf(char: string): HiddenCharacter | null {
    const code = char.codePointAt(0);
    if (code === undefined) {
      return null;
    }
    for (const kind of HIDDEN_CHARACTERS) {
      if (Private.RANGES[kind].some(([a, b]) => code >= a && code <= b)) {
        return kind;
      }
    }
    return null;
  }

  /**
   * The visible form of one hidden character: `⟨U+202E⟩`.
   */
  export function escape(char: string): string {
    const code = char.codePointAt(0) ?? 0;
    return `\u27e8U+${code.toString(16).toUpperCase().padStart(4, '0')}\u27e9`;
  }

  /**
   * The text with every hidden character replaced by its visible form, for
   * places that cannot be styled (a tooltip, a tab title).
   */
  export function escaped(text: string): string {
    return text.replace(regExp(), escape);
  }

  /**
   * The hidden characters of a text, in order.
   */
  export function find(text: string): string[] {
    return text.match(regExp()) ?? [];
  }

  /**
   * A text cut into plain pieces and hidden characters, in order; joined,
   * the pieces' texts are the text.
   */
  export function segments(text: string): ISegment[] {
    const found: ISegment[] = [];
    let at = 0;
    for (const match of text.matchAll(regExp())) {
      const index = match.index ?? 0;
      if (index > at) {
        found.push({ text: text.slice(at, index), kind: null });
      }
      found.push({ text: match[0], kind: kindOf(match[0]) });
      at = index + match[0].length;
    }
    if (at < text.length) {
      found.push({ text: text.slice(at), kind: null });
    }
    return found;
  }
}

namespace Private {
  type Range = readonly [number, number];

  const parse = (items: readonly string[]): Range[] =>
    items.map(item => {
      const [first, last] = item.split('..');
      return [parseInt(first, 16), parseInt(last ?? first, 16)];
    });

  /**
   * The ranges of each kind, as numbers.
   */
  export const RANGES: Record<HiddenCharacter, Range[]> = {
    bidi: parse(HIDDEN_CHARACTER_RANGES.bidi),
    invisible: parse(HIDDEN_CHARACTER_RANGES.invisible),
    control: parse(HIDDEN_CHARACTER_RANGES.control)
  };

  const hex = (code: number) => `\\u{${code.toString(16)}}`;

  /**
   * A character class of every range of every kind.
   */
  export const SOURCE = `[${HIDDEN_CHARACTERS.flatMap(kind =>
    RANGES[kind].map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`))
  ).join('')}]`;
}
