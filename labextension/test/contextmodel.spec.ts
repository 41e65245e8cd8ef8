// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * The context model (contextmodel.ts) over a scripted API client.
 */

import type { CopilotApi, IContextEntry, Outcome } from '../src/api';
import { ContextModel } from '../src/contextmodel';
import { english } from './translation';

const VIEW: IContextEntry = {
  name: 'notebook_view_state',
  description: '',
  value: {
    artifactId: 'a',
    viewType: 'notebook',
    permissionMode: 'edit',
    selectedCellCount: 1,
    kernelLanguage: 'python'
  }
};

function selected(source: string, hash: string): IContextEntry {
  return {
    name: 'notebook_selected_cell',
    description: '',
    value: {
      artifactId: 'a',
      cellId: 'c1',
      cellType: 'code',
      language: 'python',
      source,
      expectedSourceHash: hash
    }
  };
}

/**
 * A model whose get-context calls answer with the next of `answers`, and a
 * count of its `changed` signals.
 */
function model(answers: Outcome<{ customContext: IContextEntry[] }>[]) {
  const api = {
    action: async () => answers.shift()
  } as unknown as CopilotApi;
  const context = new ContextModel({ pageId: 'p', api, trans: english });
  const seen = { changed: 0, attachments: 0 };
  context.changed.connect(() => void seen.changed++);
  context.attachmentChanged.connect(() => void seen.attachments++);
  return { context, seen };
}

const ok = (...entries: IContextEntry[]) => ({
  result: { customContext: entries }
});

describe('a context refresh', () => {
  it('tells the panel only when what it shows changed', async () => {
    const { context, seen } = model([
      ok(VIEW, selected('x = 1', 'h1')),
      ok(VIEW, selected('x = 1', 'h1')),
      ok(VIEW, selected('x = 1', 'h1')),
      ok(VIEW, selected('x = 1\ny = 2', 'h2')),
      { error: { code: 'no-active-page', message: 'No page.' } },
      { error: { code: 'no-active-page', message: 'No page.' } }
    ]);
    await context.refresh();
    expect(seen.changed).toBe(1);
    await context.refresh();
    await context.refresh();
    expect(seen.changed).toBe(1);
    await context.refresh();
    expect(seen.changed).toBe(2);
    expect(context.context?.cell?.lineCount).toBe(2);
    await context.refresh();
    await context.refresh();
    expect(seen.changed).toBe(3);
    expect(context.context?.message).toBe('No page.');
    context.dispose();
  });

  it('still follows a new hash of the attached cell', async () => {
    const { context, seen } = model([
      ok(VIEW, selected('x = 1', 'h1')),
      ok(VIEW, selected('x = 1', 'h1')),
      ok(VIEW, selected('x = 3', 'h3'))
    ]);
    await context.refresh();
    expect(context.attach()).toBe(true);
    await context.refresh();
    expect(seen.attachments).toBe(1);
    await context.refresh();
    expect(seen.attachments).toBe(2);
    expect(context.attachment?.expectedSourceHash).toBe('h3');
    context.dispose();
  });
});
