// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * The page path the matcher sees (matcher.ts). The matcher itself is checked
 * against Python's on a shared table in tests/test_registry.py.
 */

import { pagePath } from '../src/matcher';

describe('pagePath', () => {
  it('strips the base URL like the contract says', () => {
    const cases: [string, string][] = [
      ['/lab/tree/a.ipynb', '/'],
      ['/user/alice/lab/tree/My%20Notebook.ipynb', '/user/alice/'],
      ['/user/alice/notebooks/a.ipynb', '/user/alice']
    ];
    expect(cases.map(([p, b]) => pagePath(p, b))).toEqual([
      'lab/tree/a.ipynb',
      'lab/tree/My%20Notebook.ipynb',
      'notebooks/a.ipynb'
    ]);
  });
});
