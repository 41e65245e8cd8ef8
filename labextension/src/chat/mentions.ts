// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * The pure part of `@` in the composer: finding the `@query` the caret is
 * in, ranking what it may name, and taking the `@query` out of the text once
 * a chip stands for it. No DOM, no JupyterLab: Jest runs it as it is.
 */

/**
 * What an `@` can name: a cell of the active notebook, a file under the
 * server's folder, or a variable of the notebook's kernel.
 */
export type MentionKind = 'cell' | 'file' | 'variable';

/**
 * One thing the `@` menu offers.
 */
export interface IMention {
  kind: MentionKind;
  /** What the typed query is matched against: a variable's name, a path. */
  key: string;
  /** What the menu and the chip show. */
  label: string;
  /** A quiet second line: a variable's type, a cell's first line. */
  detail: string;
}

/**
 * An `@query` in a text: where its `@` is and what follows it.
 */
export interface IMentionQuery {
  /** The index of the `@`. */
  start: number;
  /** The text between the `@` and the caret. */
  query: string;
}

/**
 * The longest query the menu follows, in characters: a longer word after an
 * `@` is an address or a decorator, not a mention.
 */
export const MAX_QUERY_CHARS = 80;

/**
 * The `@query` that ends at the caret, or `null`. The `@` starts the text or
 * follows white space (so `a@b.org` is not one), and the query holds no white
 * space and no other `@`.
 *
 * @param text - The composer's text.
 * @param caret - The caret's index; a selection never opens the menu.
 */
export function mentionAt(text: string, caret: number): IMentionQuery | null {
  if (caret < 0 || caret > text.length) {
    return null;
  }
  let i = caret - 1;
  while (i >= 0 && caret - i <= MAX_QUERY_CHARS + 1) {
    const c = text[i];
    if (c === '@') {
      if (i > 0 && !/\s/.test(text[i - 1])) {
        return null;
      }
      return { start: i, query: text.slice(i + 1, caret) };
    }
    if (/\s/.test(c)) {
      return null;
    }
    i--;
  }
  return null;
}

/**
 * The mentions that match a query, best first, at most `max`: a key that
 * starts with the query, then a part of a key (after `.`, `/`, `_` or a
 * space) that does, then a key or label that holds it; case is ignored, and
 * within a rank the shorter key comes first, then the original order.
 *
 * @param mentions - Everything on offer, in the order to show.
 * @param query - What was typed after the `@`.
 * @param max - How many to return.
 */
export function matchMentions(
  mentions: readonly IMention[],
  query: string,
  max = 8
): IMention[] {
  const q = query.toLowerCase();
  const ranked: { mention: IMention; rank: number; index: number }[] = [];
  mentions.forEach((mention, index) => {
    const rank = Private.rank(mention, q);
    if (rank !== null) {
      ranked.push({ mention, rank, index });
    }
  });
  ranked.sort(
    (a, b) =>
      a.rank - b.rank ||
      a.mention.key.length - b.mention.key.length ||
      a.index - b.index
  );
  return ranked.slice(0, max).map(r => r.mention);
}

/**
 * The text without the `@query` that ended at `caret`, and where the caret
 * goes: the chip now stands for what was typed.
 *
 * @param text - The composer's text.
 * @param mention - The `@query` the person picked from.
 * @param caret - The caret's index, at the end of the query.
 */
export function removeMention(
  text: string,
  mention: IMentionQuery,
  caret: number
): { text: string; caret: number } {
  let end = caret;
  // One space after the query goes with it, unless the `@` started the text
  // after a space already: `see @df now` becomes `see now`.
  const before = mention.start > 0 ? text[mention.start - 1] : '';
  if (text[end] === ' ' && (before === '' || before === ' ')) {
    end++;
  }
  return {
    text: text.slice(0, mention.start) + text.slice(end),
    caret: mention.start
  };
}

namespace Private {
  /**
   * How well a mention matches a lower-cased query; `null`: not at all.
   */
  export function rank(mention: IMention, q: string): number | null {
    const key = mention.key.toLowerCase();
    if (q === '' || key.startsWith(q)) {
      return 0;
    }
    if (key.split(/[./_\s-]/).some(part => part.startsWith(q))) {
      return 1;
    }
    if (key.includes(q) || mention.label.toLowerCase().includes(q)) {
      return 2;
    }
    return null;
  }
}
