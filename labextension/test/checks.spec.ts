// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * The page's own checks and Keep's replacement (review/checks.ts).
 */

import { sourceHash } from '../src/hash';
import {
  checkInsert,
  checkProposal,
  parseInsert,
  parseProposal,
  replacement
} from '../src/review/checks';

const OLD = 'x = 1\n';

interface ICase {
  data: Record<string, unknown>;
  path: string;
  cell: unknown;
}

function makeCase(
  options: { path?: string; cell?: unknown } = {},
  data: Record<string, unknown> = {}
): ICase {
  const proposal = {
    callId: 'c',
    artifactId: 'nb',
    path: 'a.ipynb',
    cellId: 'c1',
    expectedSourceHash: sourceHash(OLD),
    newSource: 'x = 2\n',
    expectedCellType: 'code',
    ...data
  };
  const cell =
    'cell' in options
      ? options.cell
      : { cellType: 'code', editable: true, source: OLD };
  return { data: proposal, path: options.path ?? 'a.ipynb', cell };
}

function verdict(c: ICase): string | null {
  const proposal = parseProposal(c.data);
  if (!proposal) {
    return 'unparsable';
  }
  const failure = checkProposal(proposal, c.path, c.cell as any);
  return failure ? failure.code : null;
}

describe('the page checks', () => {
  it('runs in the contract order', () => {
    const stale = { cellType: 'code', editable: true, source: 'x = 3\n' };
    const lockedStale = {
      cellType: 'code',
      editable: false,
      source: 'x = 3\n'
    };
    const retypedStale = {
      cellType: 'markdown',
      editable: true,
      source: 'x = 3\n'
    };
    const cases: Record<string, ICase> = {
      ok: makeCase(),
      'untyped ok': makeCase(
        { cell: { ...stale, source: OLD } },
        { expectedCellType: null }
      ),
      'wrong path and stale': makeCase({ path: 'b.ipynb', cell: stale }),
      missing: makeCase({ cell: null }),
      'locked and stale': makeCase({ cell: lockedStale }),
      'retyped and stale': makeCase({ cell: retypedStale }),
      stale: makeCase({ cell: stale }),
      'editable missing is not locked': makeCase({
        cell: { cellType: 'code', source: OLD }
      }),
      'bad data': makeCase({}, { newSource: 5 })
    };
    const got = Object.fromEntries(
      Object.entries(cases).map(([name, c]) => [name, verdict(c)])
    );
    expect(got).toEqual({
      ok: null,
      'untyped ok': null,
      'wrong path and stale': 'artifact-mismatch',
      missing: 'cell-not-found',
      'locked and stale': 'cell-locked',
      'retyped and stale': 'cell-type-mismatch',
      stale: 'stale-source',
      'editable missing is not locked': null,
      'bad data': 'unparsable'
    });
  });
});

describe('the page checks of an insert', () => {
  const request = {
    callId: 'c',
    artifactId: 'nb',
    path: 'a.ipynb',
    afterCellId: 'c1',
    cellType: 'code',
    source: 'x = 1\n'
  };

  function insertVerdict(
    data: Record<string, unknown>,
    path: string,
    anchorFound: boolean
  ): string | null {
    const proposal = parseInsert({ ...request, ...data });
    if (!proposal) {
      return 'unparsable';
    }
    return checkInsert(proposal, path, anchorFound)?.code ?? null;
  }

  it('runs in the order of section 11.1', () => {
    const got = {
      ok: insertVerdict({}, 'a.ipynb', true),
      'wrong path and no anchor': insertVerdict({}, 'b.ipynb', false),
      'no anchor': insertVerdict({}, 'a.ipynb', false),
      'top needs no anchor': insertVerdict(
        { afterCellId: null },
        'a.ipynb',
        false
      ),
      'empty anchor': insertVerdict({ afterCellId: '' }, 'a.ipynb', true),
      'unknown type': insertVerdict({ cellType: 'sql' }, 'a.ipynb', true),
      'source not text': insertVerdict({ source: 5 }, 'a.ipynb', true),
      'anchor missing': insertVerdict(
        { afterCellId: undefined },
        'a.ipynb',
        true
      )
    };
    expect(got).toEqual({
      ok: null,
      'wrong path and no anchor': 'artifact-mismatch',
      'no anchor': 'cell-not-found',
      'top needs no anchor': null,
      'empty anchor': 'unparsable',
      'unknown type': 'unparsable',
      'source not text': 'unparsable',
      'anchor missing': 'unparsable'
    });
  });
});

describe("Keep's replacement", () => {
  it('always yields exactly the new source', () => {
    const pairs: [string, string][] = [
      ['', 'a'],
      ['a', ''],
      ['same', 'same'],
      ['x = 1\n', 'x = 2\n'],
      ['abc', 'abxbc'],
      ['\u{1f600}a', '\u{1f601}a'],
      ['a\u{1f600}', 'a\u{1f601}'],
      ['aaaa', 'aa'],
      ['line\r\nnext', 'line\nnext'],
      ['e\u0301', '\u00e9']
    ];
    const applied = pairs.map(([a, b]) => {
      const r = replacement(a, b);
      return a.slice(0, r.start) + r.text + a.slice(r.end);
    });
    expect(applied).toEqual(pairs.map(([, b]) => b));
  });
});
