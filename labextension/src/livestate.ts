// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { Cell } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';

import { sourceHash } from './hash';

/**
 * The semantic state of the page (contract 9, `state.state`).
 */
export interface IPageState {
  focused: boolean;
  url: string;
  activeNotebook: IActiveNotebookState | null;
}

/**
 * What the page reports of its active notebook.
 */
export interface IActiveNotebookState {
  path: string;
  viewType: string;
  writable: boolean;
  kernelSessionId: string | null;
  language: string | null;
  cellCount: number;
  selectedCellIds: string[];
  selectedCellHash: string | null;
}

/**
 * The result data of the get-context action, read from the live model.
 */
export interface ILiveContext {
  activeNotebook: null | {
    path: string;
    viewType: string;
    writable: boolean;
    language: string | null;
    kernelSessionId: string | null;
    selectedCellIds: string[];
    selectedCell: null | { cellId: string; cellType: string; source: string };
  };
}

/**
 * Read the page state now.
 *
 * @param panel - The active notebook panel, or `null`.
 * @param url - The current page path.
 */
export function readPageState(
  panel: NotebookPanel | null,
  url: string
): IPageState {
  const focused = document.hasFocus() && document.visibilityState === 'visible';
  if (!panel?.model || panel.isDisposed) {
    return { focused, url, activeNotebook: null };
  }
  const selected = selectedCells(panel);
  const base = Private.notebookBase(panel);
  return {
    focused,
    url,
    activeNotebook: {
      path: base.path,
      viewType: base.viewType,
      writable: base.writable,
      kernelSessionId: base.kernelSessionId,
      language: base.language,
      cellCount: panel.model.cells.length,
      selectedCellIds: selected.map(cell => cell.model.id),
      selectedCellHash:
        selected.length === 1
          ? sourceHash(selected[0].model.sharedModel.getSource())
          : null
    }
  };
}

/**
 * Read the get-context data from the live in-memory model, unsaved edits
 * included.
 *
 * @param panel - The active notebook panel, or `null`.
 */
export function readLiveContext(panel: NotebookPanel | null): ILiveContext {
  if (!panel?.model || panel.isDisposed) {
    return { activeNotebook: null };
  }
  const selected = selectedCells(panel);
  const single = selected.length === 1 ? selected[0].model : null;
  return {
    activeNotebook: {
      ...Private.notebookBase(panel),
      selectedCellIds: selected.map(cell => cell.model.id),
      selectedCell: single
        ? {
            cellId: single.id,
            cellType: single.type,
            source: single.sharedModel.getSource()
          }
        : null
    }
  };
}

/**
 * The selected cells of a notebook in document order; a lone active cell
 * counts as one selected cell.
 *
 * This runs on every keystroke, so the usual case of one cell must not scan
 * all cells: the notebook keeps its own list of selected cells up to date on
 * `activeCellChanged` and `selectionChanged`. When that list holds just the
 * active cell, that is the answer; a multi-selection is read from the cells.
 */
export function selectedCells(panel: NotebookPanel): Cell[] {
  const notebook = panel.content;
  const active = notebook.activeCell;
  const listed = notebook.selectedCells;
  if (active && listed.length === 1 && listed[0] === active) {
    return [active];
  }
  return notebook.widgets.filter(cell => notebook.isSelectedOrActive(cell));
}

/**
 * JSON with object keys sorted at every level, so that equal states give
 * equal fingerprints.
 */
export function stableStringify(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) =>
            a < b ? -1 : a > b ? 1 : 0
          )
        )
      : v
  );
}

namespace Private {
  /**
   * The fields shared by the page state and the live context.
   */
  export function notebookBase(panel: NotebookPanel) {
    const model = panel.model!;
    const { context, sessionContext } = panel;
    const info = model.getMetadata('language_info') as
      { name?: unknown } | undefined;
    const spec = model.getMetadata('kernelspec') as
      { language?: unknown } | undefined;
    const language =
      typeof info?.name === 'string' && info.name
        ? info.name
        : typeof spec?.language === 'string' && spec.language
          ? spec.language
          : null;
    return {
      path: context.localPath,
      viewType: 'notebook',
      writable: !model.readOnly && context.contentsModel?.writable !== false,
      language,
      kernelSessionId: sessionContext.session?.id ?? null
    };
  }
}
