// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * The error Fix and Explain attach (tracebacks.ts): colour codes stripped,
 * the traceback's last lines within the budget, and what was left out said.
 */

import { utf8Length } from '../src/hash';
import { budgetError, firstError, stripAnsi } from '../src/tracebacks';

const RED = '\u001b[0;31m';
const RESET = '\u001b[0m';

describe('stripAnsi', () => {
  it('removes colour and cursor sequences and keeps the text', () => {
    expect(stripAnsi(`${RED}ZeroDivisionError${RESET}: x`)).toBe(
      'ZeroDivisionError: x'
    );
    expect(stripAnsi('a\u001b[1;32;40mb\u001b[2Kc')).toBe('abc');
    expect(stripAnsi('\u001b]8;;http://x\u0007link\u001b]8;;\u0007')).toBe(
      'link'
    );
  });
});

describe('budgetError', () => {
  const output = {
    output_type: 'error',
    ename: 'ZeroDivisionError',
    evalue: 'division by zero',
    traceback: [
      `${RED}------------${RESET}`,
      `Cell ${RED}In[1], line 1${RESET}\n----> 1 x = 1/0`,
      `${RED}ZeroDivisionError${RESET}: division by zero`
    ]
  };

  it('keeps a traceback that fits whole, without colour codes', () => {
    const error = budgetError(output, 8192);
    expect(error).toEqual({
      ename: 'ZeroDivisionError',
      evalue: 'division by zero',
      traceback:
        '------------\nCell In[1], line 1\n----> 1 x = 1/0\nZeroDivisionError: division by zero',
      omitted: null
    });
  });

  it('keeps the last lines that fit and counts the ones left out', () => {
    const frames = Array.from(
      { length: 400 },
      (_, i) => `frame ${i} ${'é'.repeat(20)}`
    );
    const error = budgetError(
      { ename: 'E', evalue: 'v', traceback: frames },
      2048
    );
    const kept = error.traceback.split('\n');
    expect(kept[kept.length - 1]).toBe(frames[frames.length - 1]);
    expect(frames.slice(frames.length - kept.length)).toEqual(kept);
    expect(utf8Length(error.traceback)).toBeLessThanOrEqual(2048);
    expect(error.omitted).toEqual({
      reason: 'over-budget',
      tracebackBytes: utf8Length(frames.join('\n')),
      budgetBytes: 2048,
      linesOmitted: frames.length - kept.length
    });
    expect(error.omitted!.linesOmitted).toBeGreaterThan(0);
  });

  it('never cuts a line: one too long is left out whole', () => {
    const error = budgetError(
      { ename: 'E', evalue: 'v', traceback: ['x'.repeat(5000)] },
      1024
    );
    expect(error.traceback).toBe('');
    expect(error.omitted?.linesOmitted).toBe(1);
  });

  it('reads a malformed output as an empty error', () => {
    expect(budgetError({ traceback: [3, null] }, 1024)).toEqual({
      ename: '',
      evalue: '',
      traceback: '',
      omitted: null
    });
  });
});

describe('firstError', () => {
  it('finds the error output among others', () => {
    const error = { output_type: 'error', ename: 'E' };
    expect(firstError([{ output_type: 'stream' }, error])).toBe(error);
    expect(firstError([{ output_type: 'stream' }, null])).toBeNull();
  });
});
