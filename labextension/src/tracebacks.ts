// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * The error a cell's run ended with, as Fix and Explain attach it: its name,
 * its value and as much of the traceback as the byte budget holds, terminal
 * colour codes stripped. What does not fit is counted, never cut silently.
 *
 * This module imports only other pure modules, so that Jest loads it as it is.
 */

import { utf8Length } from './hash.js';

/**
 * What was left out of a traceback to keep within the budget.
 */
export interface ITracebackOmitted {
  reason: 'over-budget';
  /** The UTF-8 size of the whole traceback, colour codes stripped. */
  tracebackBytes: number;
  /** The budget the error was kept within. */
  budgetBytes: number;
  /** How many lines of the traceback were left out (from its start). */
  linesOmitted: number;
}

/**
 * An error output, ready to attach.
 */
export interface IBudgetedError {
  ename: string;
  evalue: string;
  /** The lines of the traceback that fit, joined with newlines. */
  traceback: string;
  /** `null` when nothing was left out. */
  omitted: ITracebackOmitted | null;
}

/**
 * The bytes an error may use besides its traceback's text: its field names
 * and JSON punctuation as the server receives it.
 */
const OVERHEAD_BYTES = 256;

/**
 * Terminal control sequences (CSI with its parameters, and OSC up to its
 * terminator), as IPython's coloured tracebacks hold them.
 */
/* eslint-disable no-control-regex */
const ANSI =
  /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;
/* eslint-enable no-control-regex */

/**
 * A text without terminal colour and control sequences.
 */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/**
 * The error output's parts within `budgetBytes`: the name and the value
 * always (the value is what the person saw; an error whose name and value
 * alone exceed the budget is still attached, and the server refuses what it
 * cannot take), then the traceback's last lines that fit, since the line that
 * failed and the error are at its end. Lines left out are counted in
 * `omitted`; a line is never cut in the middle.
 *
 * @param output - An nbformat error output: `ename`, `evalue`, `traceback`.
 * @param budgetBytes - The context budget, in UTF-8 bytes.
 */
export function budgetError(
  output: { ename?: unknown; evalue?: unknown; traceback?: unknown },
  budgetBytes: number
): IBudgetedError {
  const ename = stripAnsi(typeof output.ename === 'string' ? output.ename : '');
  const evalue = stripAnsi(
    typeof output.evalue === 'string' ? output.evalue : ''
  );
  const frames = Array.isArray(output.traceback)
    ? output.traceback.filter((f): f is string => typeof f === 'string')
    : [];
  const lines = frames.map(stripAnsi).join('\n').split('\n');
  while (lines.length > 0 && lines[lines.length - 1].trim() === '') {
    lines.pop();
  }
  const whole = lines.join('\n');
  const room =
    budgetBytes - OVERHEAD_BYTES - utf8Length(ename) - utf8Length(evalue);
  if (utf8Length(whole) <= room) {
    return { ename, evalue, traceback: whole, omitted: null };
  }
  const kept: string[] = [];
  let used = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    const cost = utf8Length(lines[i]) + (kept.length > 0 ? 1 : 0);
    if (used + cost > room) {
      break;
    }
    kept.unshift(lines[i]);
    used += cost;
  }
  return {
    ename,
    evalue,
    traceback: kept.join('\n'),
    omitted: {
      reason: 'over-budget',
      tracebackBytes: utf8Length(whole),
      budgetBytes,
      linesOmitted: lines.length - kept.length
    }
  };
}

/**
 * The first error among nbformat outputs, or `null`.
 */
export function firstError(
  outputs: readonly unknown[]
): { ename?: unknown; evalue?: unknown; traceback?: unknown } | null {
  for (const output of outputs) {
    if (
      output !== null &&
      typeof output === 'object' &&
      (output as { output_type?: unknown }).output_type === 'error'
    ) {
      return output as {
        ename?: unknown;
        evalue?: unknown;
        traceback?: unknown;
      };
    }
  }
  return null;
}
