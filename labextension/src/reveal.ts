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

/**
 * Where a cell with this id is: its notebook and index, the current
 * notebook first (a copied notebook repeats cell ids), then the other open
 * ones; `null` when no open notebook has it.
 */
export function findCellById(
  notebooks: INotebookTracker,
  cellId: string
): ICellPlace | null {
  const panels: NotebookPanel[] = [];
  if (notebooks.currentWidget) {
    panels.push(notebooks.currentWidget);
  }
  notebooks.forEach(panel => void panels.push(panel));
  for (const panel of panels) {
    const cells = panel.isDisposed ? null : panel.model?.cells;
    for (let i = 0; cells && i < cells.length; i++) {
      const cell = cells.get(i);
      if (cell.id === cellId) {
        return { panel, index: i, cellType: cell.type };
      }
    }
  }
  return null;
}

/**
 * A cell found by its id in an open notebook.
 */
export interface ICellPlace {
  readonly panel: NotebookPanel;
  /** The cell's index; "cell 1" is index 0. */
  readonly index: number;
  readonly cellType: string;
}

/**
 * The panel's links to the cells it mentions by id only (attachment chips,
 * tool cards): where such a cell is now, and bringing it into view.
 */
export interface ICellLinks {
  /** Where the cell is now, or `null` when no open notebook has it. */
  find(cellId: string): ICellPlace | null;
  /** Bring the cell into view; `false` when no open notebook has it. */
  reveal(cellId: string): boolean;
}

/**
 * The cell links of a page's notebooks.
 */
export function cellLinks(
  shell: JupyterFrontEnd.IShell | null,
  notebooks: INotebookTracker
): ICellLinks {
  return {
    find: cellId => findCellById(notebooks, cellId),
    reveal: cellId => {
      const place = findCellById(notebooks, cellId);
      return (
        !!place &&
        revealCell(shell, notebooks, place.panel.context.localPath, cellId)
      );
    }
  };
}
