// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * The parts (hunks) of a whole-cell edit under review, and what Keep
 * applies after the person kept or dropped some of them: pure, so that
 * Jest can run it without an editor.
 *
 * The diff compares both sources with a final line break. A cell's source
 * usually has none and an agent's proposal usually has one; compared as
 * they are, the last line would show as removed and added again, the same
 * on both sides ("import os" and "import os"), as a part of its own or at
 * the head of the lines added after it. The difference in the final line
 * break is said in words instead ({@link endingChange}).
 */

/**
 * A changed part, in the positions of the diff's two texts (`a` the
 * cell's, `b` the proposal's, each with a final line break), as the merge
 * view's chunks give them: `toA` and `toB` may reach one past the end.
 */
export interface IHunk {
  readonly fromA: number;
  readonly toA: number;
  readonly fromB: number;
  readonly toB: number;
}

/**
 * What the person decided about one part; a part without a decision is
 * applied by Keep, as proposed.
 */
export type HunkDecision = 'keep' | 'drop';

/**
 * `text` with a final line break, as the diff compares it; an empty text
 * stays empty.
 */
export function withFinalBreak(text: string): string {
  return text === '' || text.endsWith('\n') ? text : text + '\n';
}

/**
 * How the proposal changes the final line break of the cell: `added`,
 * `removed` or `null` when both end alike (or either is empty).
 */
export function endingChange(
  original: string,
  proposed: string
): 'added' | 'removed' | null {
  if (original === '' || proposed === '') {
    return null;
  }
  const a = original.endsWith('\n');
  const b = proposed.endsWith('\n');
  return a === b ? null : b ? 'added' : 'removed';
}

/**
 * The source Keep applies when the person dropped some parts: the proposal
 * with each dropped part as the cell has it. `null` when no part was
 * dropped: Keep then applies the proposal exactly as it came.
 *
 * The final line break follows the last line: the cell's when the part that
 * reaches the end was dropped, the proposal's otherwise; with every part
 * dropped the result is the cell's source itself.
 *
 * @param original - The cell's source.
 * @param proposed - The proposed source.
 * @param hunks - The parts of the diff of their {@link withFinalBreak} forms.
 * @param decisions - The decisions, by the part's `fromB`.
 */
export function chosenSource(
  original: string,
  proposed: string,
  hunks: readonly IHunk[],
  decisions: ReadonlyMap<number, HunkDecision>
): string | null {
  const dropped = hunks.filter(h => decisions.get(h.fromB) === 'drop');
  if (!dropped.length) {
    return null;
  }
  if (dropped.length === hunks.length) {
    return original;
  }
  const a = withFinalBreak(original);
  let text = withFinalBreak(proposed);
  const lengthB = text.length;
  // From the last part to the first, so that earlier positions still hold;
  // each part put back as the merge view reverts a chunk.
  for (const h of [...dropped].sort((x, y) => y.fromB - x.fromB)) {
    let insert = a.slice(h.fromA, Math.max(h.fromA, h.toA - 1));
    if (h.fromA !== h.toA && h.toB <= lengthB) {
      insert += '\n';
    }
    text =
      text.slice(0, h.fromB) + insert + text.slice(Math.min(h.toB, lengthB));
  }
  const last = hunks.reduce<IHunk | null>(
    (end, h) => (h.toB >= lengthB && (!end || h.fromB > end.fromB) ? h : end),
    null
  );
  const ending =
    last && decisions.get(last.fromB) === 'drop' ? original : proposed;
  return ending === '' || ending.endsWith('\n') || !text.endsWith('\n')
    ? text
    : text.slice(0, -1);
}

/**
 * How many parts were kept, dropped, and are still to decide.
 */
export function hunkCounts(
  hunks: readonly IHunk[],
  decisions: ReadonlyMap<number, HunkDecision>
): { kept: number; dropped: number; open: number } {
  let kept = 0;
  let dropped = 0;
  for (const h of hunks) {
    const d = decisions.get(h.fromB);
    if (d === 'keep') {
      kept++;
    } else if (d === 'drop') {
      dropped++;
    }
  }
  return { kept, dropped, open: hunks.length - kept - dropped };
}
