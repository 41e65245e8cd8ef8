// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * The page's checks of a run and how a run ended (run/checks.ts).
 */

import { sourceHash } from '../src/hash';
import {
  checkRun,
  IRunCellFacts,
  IRunRequest,
  parseRun,
  runEnding,
  runLocked,
  shortHash
} from '../src/run/checks';

const SOURCE = 'x = 21\n';

function request(changes: Partial<IRunRequest> = {}): IRunRequest {
  return {
    callId: 'c',
    artifactId: 'a',
    path: 'a.ipynb',
    cellId: 'c1',
    expectedSourceHash: sourceHash(SOURCE)!,
    ...changes
  };
}

function cell(changes: Partial<IRunCellFacts> = {}): IRunCellFacts {
  return { cellType: 'code', metadata: {}, source: SOURCE, ...changes };
}

describe('parseRun', () => {
  it('reads a complete request and nothing else', () => {
    expect(parseRun({ ...request(), extra: 1 })).toEqual(request());
  });

  it.each(['callId', 'artifactId', 'path', 'cellId', 'expectedSourceHash'])(
    'refuses a request without %s, or with it empty',
    key => {
      const data: Record<string, unknown> = { ...request() };
      delete data[key];
      expect(parseRun(data)).toBeNull();
      expect(parseRun({ ...request(), [key]: '' })).toBeNull();
      expect(parseRun({ ...request(), [key]: 7 })).toBeNull();
    }
  );
});

describe('runLocked', () => {
  it.each([
    [{ jupyter_copilot: { agent_run: false } }, true],
    [{ jupyter_copilot: { agent_run: true } }, false],
    [{ jupyter_copilot: { agent_run: 0 } }, false],
    [{ jupyter_copilot: false }, false],
    [{ editable: false }, false],
    [null, false],
    [[], false]
  ])('%j locked: %s', (metadata, locked) => {
    expect(runLocked(metadata)).toBe(locked);
  });
});

describe('checkRun', () => {
  it('lets an unchanged code cell run', () => {
    expect(checkRun(request(), 'a.ipynb', cell())).toBeNull();
    // An edit lock does not stop a run.
    expect(
      checkRun(request(), 'a.ipynb', cell({ metadata: { editable: false } }))
    ).toBeNull();
  });

  it('checks in the contract order: path, cell, mark, type, source', () => {
    const locked = { jupyter_copilot: { agent_run: false } };
    const everything = cell({
      cellType: 'markdown',
      metadata: locked,
      source: 'changed'
    });
    expect(checkRun(request(), 'b.ipynb', null)?.code).toBe(
      'artifact-mismatch'
    );
    expect(checkRun(request(), 'a.ipynb', null)?.code).toBe('cell-not-found');
    expect(checkRun(request(), 'a.ipynb', everything)?.code).toBe(
      'cell-locked'
    );
    expect(
      checkRun(request(), 'a.ipynb', { ...everything, metadata: {} })?.code
    ).toBe('cell-type-mismatch');
    expect(
      checkRun(request(), 'a.ipynb', cell({ source: SOURCE + ' ' }))?.code
    ).toBe('stale-source');
  });

  it('says why in plain words, never with the source', () => {
    const failure = checkRun(
      request(),
      'a.ipynb',
      cell({ source: 'secret = 1' })
    );
    expect(failure?.message).toMatch(/changed since the agent read it/);
    expect(failure?.message).not.toMatch(/secret/);
  });
});

describe('runEnding', () => {
  it('is ok on success, error for a named exception, aborted otherwise', () => {
    expect(runEnding({ success: true })).toBe('ok');
    expect(
      runEnding({ success: false, error: { errorName: 'ValueError' } })
    ).toBe('error');
    expect(runEnding({ success: false, error: { errorName: '' } })).toBe(
      'aborted'
    );
    expect(runEnding({ success: false, error: new Error('Canceled') })).toBe(
      'aborted'
    );
    expect(runEnding(null)).toBe('aborted');
  });
});

describe('shortHash', () => {
  it('keeps the first 8 hex digits', () => {
    expect(shortHash(`sha256:${'0123456789abcdef'.repeat(4)}`)).toBe(
      'sha256:01234567'
    );
    expect(shortHash('odd')).toBe('odd');
  });
});
