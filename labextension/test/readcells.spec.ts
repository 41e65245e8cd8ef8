// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * The page's read-cells action: output digests (outputdigest.ts) and paging
 * (readcells.ts). That a read matches the server's result schema is checked
 * from Python in tests/test_read_cells.py.
 */

import {
  base64DecodedSize,
  digestOutputs,
  savedWidgetType
} from '../src/outputdigest';
import { ICellReader, readCells } from '../src/readcells';
import { json, utf8 } from './helpers';

interface ICell {
  cellId: string;
  cellType: string;
  source: string;
  outputs?: unknown[];
}

interface INotebook {
  path: string;
  cells: ICell[];
  widgets?: Record<string, string>;
}

function code(cellId: string, source: string, outputs: unknown[] = []): ICell {
  return { cellId, cellType: 'code', source, outputs };
}

function markdown(cellId: string, source: string): ICell {
  return { cellId, cellType: 'markdown', source };
}

function notebook(cells: ICell[], extra: Partial<INotebook> = {}): INotebook {
  return { path: 'dir/a.ipynb', cells, ...extra };
}

function request(data: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    path: 'dir/a.ipynb',
    startCellId: null,
    maxCells: 500,
    maxBytes: 8192,
    includeOutputs: false,
    ...data
  };
}

function reader(nb: INotebook | null): {
  reader: ICellReader | null;
  lookups: string[];
} {
  const lookups: string[] = [];
  if (!nb) {
    return { reader: null, lookups };
  }
  return {
    lookups,
    reader: {
      path: nb.path,
      cellCount: nb.cells.length,
      indexOf: id => nb.cells.findIndex(c => c.cellId === id),
      cell: i => {
        const c = nb.cells[i];
        return {
          cellId: c.cellId,
          cellType: c.cellType,
          source: c.source,
          outputs: () => c.outputs ?? []
        };
      },
      widgetType: async id => {
        lookups.push(id);
        return (nb.widgets ?? {})[id] ?? null;
      }
    }
  };
}

/**
 * Read a notebook: the result as JSON and the widget lookups, or the
 * refusal's code and message.
 */
async function read(
  nb: INotebook | null,
  data: Record<string, unknown> = {}
): Promise<{
  result?: any;
  lookups?: string[];
  error?: string;
  message?: string;
}> {
  const { reader: r, lookups } = reader(nb);
  try {
    return { result: json(await readCells(r, request(data))), lookups };
  } catch (err) {
    return {
      error: (err as { code: string }).code,
      message: (err as Error).message
    };
  }
}

function base64(bytes: number[]): string {
  return btoa(String.fromCharCode(...bytes));
}

// 772 bytes: base64 ends with "=="
const PNG = [
  ...[0, 1, 2].flatMap(() => [...Array(256).keys()]),
  0x89,
  ...[...'PNG'].map(c => c.charCodeAt(0))
];
const WIDGET_MIME = 'application/vnd.jupyter.widget-view+json';

describe('output digests', () => {
  it('digest each output type without payloads', () => {
    const png = base64(PNG);
    const wrapped: string[] = [];
    for (let i = 0; i < png.length; i += 76) {
      wrapped.push(png.slice(i, i + 76));
    }
    const wrappedPng = wrapped.join('\n') + '\n';
    const html = '<b>caf\u00e9 \u{1f600}</b>';
    const outputs = [
      { output_type: 'stream', name: 'stdout', text: ['a\n', 'b\n'] },
      { output_type: 'stream', name: 'stderr', text: 'warn\n' },
      {
        output_type: 'execute_result',
        execution_count: 3,
        metadata: {},
        data: {
          'text/plain': ['<Figure>', '\n'],
          'text/markdown': '**x**',
          'image/png': wrappedPng,
          'image/jpeg': png.slice(0, -2), // unpadded
          'text/html': html,
          'image/svg+xml': ['<svg>', '\u00e9</svg>'],
          'application/json': { k: ['\u00e9'] },
          'application/pdf': 'not base64!'
        }
      },
      {
        output_type: 'display_data',
        metadata: {},
        data: {
          [WIDGET_MIME]: { model_id: 'm1', version_major: 2, version_minor: 0 },
          'text/plain': 'IntSlider(value=3)'
        }
      },
      {
        output_type: 'display_data',
        data: { [WIDGET_MIME]: { model_id: 'm2' } }
      },
      {
        output_type: 'error',
        ename: 'ValueError',
        evalue: 'bad value',
        traceback: ['\u001b[31mTraceback with secrets']
      },
      { output_type: 'update_display_data', data: {} }
    ];
    const got = json(
      digestOutputs(outputs, new Map([['m1', 'IntSliderModel']]))
    );
    expect(got).toEqual([
      { outputType: 'stream', name: 'stdout', text: 'a\nb\n' },
      { outputType: 'stream', name: 'stderr', text: 'warn\n' },
      {
        outputType: 'execute_result',
        executionCount: 3,
        data: {
          'text/plain': { text: '<Figure>\n' },
          'text/markdown': { text: '**x**' },
          'image/png': { bytes: PNG.length },
          'image/jpeg': { bytes: PNG.length },
          'text/html': { bytes: utf8(html) },
          'image/svg+xml': { bytes: utf8('<svg>\u00e9</svg>') },
          'application/json': { bytes: utf8('{"k":["\u00e9"]}') },
          'application/pdf': { bytes: utf8('not base64!') }
        }
      },
      {
        outputType: 'display_data',
        data: {
          [WIDGET_MIME]: { modelId: 'm1', widgetType: 'IntSliderModel' },
          'text/plain': { text: 'IntSlider(value=3)' }
        }
      },
      {
        outputType: 'display_data',
        data: { [WIDGET_MIME]: { modelId: 'm2', widgetType: null } }
      },
      { outputType: 'error', ename: 'ValueError', evalue: 'bad value' }
    ]);
    expect(JSON.stringify(got)).not.toContain('Traceback');
    expect(JSON.stringify(got)).not.toContain('<b>');
  });

  it('size base64 as the decoded bytes, padded or not', () => {
    const payloads = [[], [65], [65, 66], [65, 66, 67], [65, 66, 67, 68], PNG];
    const padded = payloads.map(base64);
    const unpadded = padded.map(s => s.replace(/=+$/, ''));
    const invalid = ['QQ=Q', 'Q', 'a b c d *', 'QUJD===='];
    const got = [...padded, ...unpadded, ' QU\nJD\n', ...invalid].map(
      base64DecodedSize
    );
    const sizes = payloads.map(p => p.length);
    expect(got).toEqual([...sizes, ...sizes, 3, ...invalid.map(() => null)]);
  });

  it("take a widget's saved type from the notebook metadata", () => {
    const saved = {
      'application/vnd.jupyter.widget-state+json': {
        state: { m1: { model_name: 'IntSliderModel', state: {} }, m2: {} },
        version_major: 2
      }
    };
    const cases: [unknown, string][] = [
      [saved, 'm1'],
      [saved, 'm2'],
      [saved, 'm3'],
      [saved, '__proto__'],
      [null, 'm1'],
      [{ 'application/vnd.jupyter.widget-state+json': 'junk' }, 'm1']
    ];
    expect(cases.map(([widgets, id]) => savedWidgetType(widgets, id))).toEqual([
      'IntSliderModel',
      null,
      null,
      null,
      null,
      null
    ]);
  });
});

describe('readCells', () => {
  it('refuses in order: invalid, view, path, then cell', async () => {
    const nb = notebook([code('c1', 'x = 1\n')]);
    const cases: [INotebook | null, Record<string, unknown>][] = [
      [null, { maxCells: 0 }],
      [null, { maxBytes: '8192' }],
      [nb, { path: null }],
      [null, { path: 'b.ipynb', startCellId: 'nope' }],
      [nb, { path: 'b.ipynb', startCellId: 'nope' }],
      [nb, { startCellId: 'nope' }]
    ];
    const got = [];
    for (const [n, data] of cases) {
      got.push((await read(n, data)).error);
    }
    expect(got).toEqual([
      'invalid-input',
      'invalid-input',
      'invalid-input',
      'not-authoring-view',
      'artifact-mismatch',
      'cell-not-found'
    ]);
  });

  it('gives no cells for an empty notebook or at the end', async () => {
    const empty = (await read(notebook([]))).result;
    expect(empty).toEqual({
      path: 'dir/a.ipynb',
      cellCount: 0,
      startIndex: 0,
      cells: [],
      nextCellId: null
    });
    const one = (
      await read(notebook([code('c1', 'x')]), {
        maxBytes: 0,
        includeOutputs: true
      })
    ).result;
    expect(one.cells).toEqual([
      { cellId: 'c1', cellType: 'code', source: 'x', outputs: [] }
    ]);
  });

  it('bounds a page by maxCells and opens it at the start cell', async () => {
    const nb = notebook(
      [...Array(10).keys()].map(i => code(`c${i}`, `x = ${i}\n`))
    );
    let page = (await read(nb, { maxCells: 3 })).result;
    expect(page.cellCount).toBe(10);
    expect(page.startIndex).toBe(0);
    expect(page.cells.map((c: ICell) => c.cellId)).toEqual(['c0', 'c1', 'c2']);
    expect(page.nextCellId).toBe('c3');
    page = (await read(nb, { maxCells: 3, startCellId: 'c8' })).result;
    expect(page.startIndex).toBe(8);
    expect(page.cells.map((c: ICell) => c.cellId)).toEqual(['c8', 'c9']);
    expect(page.nextCellId).toBeNull();
  });

  it('stops once maxBytes is reached, and a large cell still comes alone', async () => {
    const nb = notebook([
      code('a', '\u00e9'.repeat(3)), // 6 bytes
      markdown('b', '1234'), // 4 bytes: total 10
      code('c', 'z'.repeat(100)),
      code('d', 'tail')
    ]);
    const ids = async (data: Record<string, unknown>) =>
      (await read(nb, data)).result.cells.map((c: ICell) => c.cellId);
    expect(await ids({ maxBytes: 10 })).toEqual(['a', 'b']);
    expect(await ids({ maxBytes: 11 })).toEqual(['a', 'b', 'c']);
    expect(await ids({ maxBytes: 6 })).toEqual(['a']);
    expect(await ids({ maxBytes: 10, startCellId: 'c' })).toEqual(['c']);
  });

  it('counts outputs toward the budget, and only code cells carry them', async () => {
    const stream = { output_type: 'stream', name: 'stdout', text: 'hello\n' };
    const nb = notebook([
      code('a', 'print()', [stream]),
      markdown('b', '# b'),
      code('c', 'pass')
    ]);
    const digest = [{ outputType: 'stream', name: 'stdout', text: 'hello\n' }];
    const size = utf8('print()') + utf8(JSON.stringify(digest));

    const without = (await read(nb)).result.cells;
    for (const c of without) {
      expect(c).not.toHaveProperty('outputs');
    }

    const cells = (await read(nb, { includeOutputs: true })).result.cells;
    expect(cells[0].outputs).toEqual(digest);
    expect(cells[1]).not.toHaveProperty('outputs');
    expect(cells[2].outputs).toEqual([]);

    const exact = (await read(nb, { includeOutputs: true, maxBytes: size }))
      .result.cells;
    expect(exact.map((c: ICell) => c.cellId)).toEqual(['a']);
    expect(
      (await read(nb, { includeOutputs: true, maxBytes: size + 1 })).result
        .cells
    ).toHaveLength(2);
    expect(
      (await read(nb, { includeOutputs: false, maxBytes: size })).result.cells
    ).toHaveLength(3);
  });

  it('looks each widget type up once per read, and only with outputs', async () => {
    const view = {
      output_type: 'display_data',
      data: { [WIDGET_MIME]: { model_id: 'm1' } }
    };
    const other = {
      output_type: 'display_data',
      data: { [WIDGET_MIME]: { model_id: 'm2' } }
    };
    const nb = notebook(
      [code('a', 'w', [view, view]), code('b', 'w', [view, other])],
      {
        widgets: { m1: 'IntSliderModel' }
      }
    );
    const got = await read(nb, { includeOutputs: true });
    expect(got.lookups).toEqual(['m1', 'm2']);
    const items = got.result.cells.flatMap((c: any) =>
      c.outputs.map((o: any) => o.data[WIDGET_MIME])
    );
    expect(items).toEqual([
      { modelId: 'm1', widgetType: 'IntSliderModel' },
      { modelId: 'm1', widgetType: 'IntSliderModel' },
      { modelId: 'm1', widgetType: 'IntSliderModel' },
      { modelId: 'm2', widgetType: null }
    ]);
    expect((await read(nb, { includeOutputs: false })).lookups).toEqual([]);
  });

  it('reads pages one after another that are exactly the notebook', async () => {
    const cells = [...Array(200).keys()].map(i =>
      i % 3
        ? code(`c${i}`, 'x'.repeat((i * 37) % 300) + '\u00e9'.repeat(i % 5))
        : markdown(`c${i}`, '# ' + 'y'.repeat((i * 11) % 90))
    );
    const nb = notebook(cells);
    const r: ICellReader = {
      path: nb.path,
      cellCount: nb.cells.length,
      indexOf: id => nb.cells.findIndex(c => c.cellId === id),
      cell: i => ({ ...nb.cells[i], outputs: () => [] }),
      widgetType: () => null
    };
    const pages: any[][] = [];
    let start: string | null = null;
    do {
      const page = json(
        await readCells(
          r,
          request({ maxCells: 40, maxBytes: 1000, startCellId: start })
        )
      );
      pages.push(page.cells);
      start = page.nextCellId;
    } while (start !== null);
    expect(pages.flat()).toEqual(
      cells.map(c => ({
        cellId: c.cellId,
        cellType: c.cellType,
        source: c.source
      }))
    );
    expect(pages.length).toBeGreaterThan(5);
    for (const page of pages) {
      expect(page.length).toBeGreaterThanOrEqual(1);
      expect(page.length).toBeLessThanOrEqual(40);
      const bytes = page.slice(0, -1).reduce((n, c) => n + utf8(c.source), 0);
      expect(bytes).toBeLessThan(1000);
    }
  });
});

describe('the images of an attached cell', () => {
  const png = (data: string) => ({
    output_type: 'display_data',
    data: { 'image/png': data, 'text/plain': '<Figure size 640x480>' },
    metadata: {}
  });

  it('are listed with their base64 data only when asked for, and never counted', async () => {
    const nb = notebook([
      code('c1', 'plot()', [
        png('iVBORw0KGgo=\n'),
        {
          output_type: 'execute_result',
          execution_count: 1,
          data: { 'image/jpeg': ['/9j/', '4AAQ'], 'image/svg+xml': '<svg/>' },
          metadata: {}
        }
      ])
    ]);
    const plain = json(await readCells(reader(nb).reader, request()));
    expect(plain.cells[0].images).toBeUndefined();
    const asked = json(
      await readCells(
        reader(nb).reader,
        request({ includeImages: true, maxImageChars: 1000, maxBytes: 1 })
      )
    );
    expect(asked.cells[0].images).toEqual([
      {
        mime: 'image/png',
        bytes: 8,
        alt: '<Figure size 640x480>',
        data: 'iVBORw0KGgo='
      },
      { mime: 'image/jpeg', bytes: 6, alt: '', data: '/9j/4AAQ' }
    ]);
    // Still one cell whatever the budget: images are not counted in it.
    expect(asked.cells).toHaveLength(1);
  });

  it('carry only their size once the limit is reached', async () => {
    const nb = notebook([code('c1', 'plot()', [png('AAAA'), png('BBBBBBBB')])]);
    const result = json(
      await readCells(
        reader(nb).reader,
        request({ includeImages: true, maxImageChars: 6 })
      )
    );
    expect(result.cells[0].images).toEqual([
      {
        mime: 'image/png',
        bytes: 3,
        alt: '<Figure size 640x480>',
        data: 'AAAA'
      },
      { mime: 'image/png', bytes: 6, alt: '<Figure size 640x480>' }
    ]);
  });

  it('refuse a malformed image limit', async () => {
    await expect(
      readCells(reader(notebook([])).reader, request({ maxImageChars: -1 }))
    ).rejects.toThrow();
  });
});
