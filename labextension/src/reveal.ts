// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

/**
 * The open notebook with this path, if any. The local path: under real-time
 * collaboration `context.path` carries the collaborative drive's prefix,
 * which the server never reports.
 */
export function notebookAt(
  notebooks: INotebookTracker,
  path: string
): NotebookPanel | null {
  return (
    notebooks.find(p => !p.isDisposed && p.context.localPath === path) ?? null
  );
}

/**
 * The position of a cell in an open notebook: `{index, count}`, or `null`
 * when the notebook is not open here or has no such cell.
 */
export function cellPosition(
  notebooks: INotebookTracker,
  path: string,
  cellId: string
): { index: number; count: number } | null {
  const cells = notebookAt(notebooks, path)?.model?.cells;
  if (!cells) {
    return null;
  }
  for (let i = 0; i < cells.length; i++) {
    if (cells.get(i).id === cellId) {
      return { index: i, count: cells.length };
    }
  }
  return null;
}

/**
 * Bring a cell into view, as a link to it in the panel does: its notebook's
 * tab in front, the cell the active one, scrolled to.
 *
 * @returns Whether the cell was found.
 */
export function revealCell(
  shell: JupyterFrontEnd.IShell | null,
  notebooks: INotebookTracker,
  path: string,
  cellId: string
): boolean {
  const panel = notebookAt(notebooks, path);
  const position = cellPosition(notebooks, path, cellId);
  if (!panel || !position) {
    return false;
  }
  shell?.activateById(panel.id);
  panel.content.activeCellIndex = position.index;
  void panel.content
    .scrollToItem(position.index, 'smart')
    .catch(() => undefined);
  return true;
}
