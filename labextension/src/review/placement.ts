// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { Cell, ICellModel } from '@jupyterlab/cells';
import type {
  IEditorLanguage,
  IEditorLanguageRegistry
} from '@jupyterlab/codemirror';
import { PathExt } from '@jupyterlab/coreutils';
import { ElementExt } from '@lumino/domutils';
import { Notebook, NotebookPanel } from '@jupyterlab/notebook';
import { PanelLayout, Widget } from '@lumino/widgets';

import { element } from '../dom';
import { pollUntil } from '../polling';
import type { Review } from './review';
import type { ReviewView } from './view';

/**
 * The part of JupyterLab's editor language registry the diff uses.
 */
export type ILanguages = Pick<
  IEditorLanguageRegistry,
  'findByMIME' | 'findByFileName' | 'getLanguage' | 'highlight'
>;

/**
 * The review's classes, loaded on first use in their own chunk.
 */
export interface IReviewModule {
  /** The view shown inside the cell. */
  ReviewView: typeof ReviewView;
  /** What Keep and Undo do. */
  Review: typeof Review;
}

/**
 * The cell widget and model with an id in a notebook, or `null`.
 *
 * @param panel - The notebook panel.
 * @param cellId - The cell id (nbformat `id`).
 */
export function findCell(
  panel: NotebookPanel,
  cellId: string
): { cell: Cell; model: ICellModel } | null {
  const cell = panel.content.widgets.find(w => w.model.id === cellId);
  return cell ? { cell, model: cell.model } : null;
}

/**
 * Load the review's chunk (the merge view included) on first use.
 *
 * @returns The review's classes, or `null` when the chunk cannot be loaded
 *   in time (the review is then refused, never replaced by a silent write).
 */
export async function loadReviewModule(): Promise<IReviewModule | null> {
  try {
    const loaded = Promise.all([import('./view'), import('./review')]).then(
      ([view, review]) => ({
        ReviewView: view.ReviewView,
        Review: review.Review
      })
    );
    return await Private.within(loaded, Private.LOAD_TIMEOUT);
  } catch {
    return null;
  }
}

/**
 * The editor extensions that highlight a cell's language in the diff; none
 * when the language is unknown or fails to load.
 *
 * @param languages - The editor language registry, when there is one.
 * @param mimeType - The cell model's MIME type.
 */
export async function languageExtensions(
  languages: ILanguages | null,
  mimeType: string
): Promise<ReviewView.IOptions['extensions']> {
  return Private.support(languages, l => l.findByMIME(mimeType));
}

/**
 * A proposed new cell's source as read-only text, highlighted in the cell's
 * language as JupyterLab highlights code in Markdown: static spans, no
 * editor. A pending cell is all new text, so there is no diff to show, and
 * an editor costs more the longer the notebook: it adds listeners to the
 * window, which already holds some for every cell editor, and its first
 * measure lays out the whole notebook at once.
 *
 * The text is never parsed as HTML. Plain when the language is unknown or
 * takes more than a second to load.
 *
 * @param languages - The editor language registry, when there is one.
 * @param mimeType - The MIME type of the new cell's language.
 * @param source - The proposed source.
 */
export async function highlightedSource(
  languages: ILanguages | null,
  mimeType: string,
  source: string
): Promise<HTMLElement> {
  // A cell's editor shows a lone "\r" as a line break; so does this.
  const text = source.replace(/\r\n?/g, '\n');
  try {
    const found = languages?.findByMIME(mimeType) ?? null;
    if (languages && found) {
      const pre = plainSource('');
      await Private.within(languages.highlight(text, found, pre), 1000);
      return pre;
    }
  } catch {
    // Unknown, failing or slow: plain text below, in a block of its own,
    // so that a late highlight never writes into it.
  }
  return plainSource(text);
}

/**
 * A proposed new cell's source as plain read-only text.
 */
export function plainSource(source: string): HTMLElement {
  return element('pre', 'jp-Copilot-PendingSource', source);
}

/**
 * The editor extensions that highlight a file's language in the diff,
 * found by its name; none when the language is unknown or fails to load.
 *
 * @param languages - The editor language registry, when there is one.
 * @param path - The file's path.
 */
export async function fileLanguageExtensions(
  languages: ILanguages | null,
  path: string
): Promise<ReviewView.IOptions['extensions']> {
  return Private.support(languages, l =>
    l.findByFileName(PathExt.basename(path))
  );
}

/**
 * Bring a cell into view and wait until it is rendered and attached. Long
 * notebooks render lazily, so a far-away cell may have no DOM yet.
 *
 * @param notebook - The notebook widget.
 * @param cell - The cell to show.
 * @param timeoutMs - How long to wait at most.
 * @returns Whether the cell is ready to hold the review.
 */
export async function showCell(
  notebook: Notebook,
  cell: Cell,
  timeoutMs = 3000
): Promise<boolean> {
  const index = notebook.widgets.indexOf(cell);
  if (index < 0) {
    return false;
  }
  if (
    cell.isPlaceholder() &&
    notebook.notebookConfig.windowingMode !== 'full'
  ) {
    // The idle-time renderer works from the top and may need many seconds to
    // reach a far cell: render this one now, as the notebook itself does to
    // show the outputs of a cell run out of view (`renderCellOutputs`).
    cell.dataset.windowedListIndex = String(index);
    (notebook.layout as PanelLayout).insertWidget(index, cell);
  }
  if (Private.isReady(cell)) {
    // Rendered and attached: the review is brought into view once it is laid
    // out (`revealWhenHidden`). Scrolling now would read the notebook's
    // layout at once, which in 2,000 cells costs JupyterLab milliseconds.
    return true;
  }
  // Windowed out: scrolling renders it. The scroll settles on its own; only
  // the cell's readiness matters here.
  notebook.scrollToItem(index, 'auto').catch(() => undefined);
  const deadline = performance.now() + timeoutMs;
  const ready = () =>
    Private.isReady(cell)
      ? true
      : cell.isDisposed || performance.now() > deadline
        ? false
        : undefined;
  return ready() ?? pollUntil(ready, { interval: 50 });
}

/**
 * Scroll a review into view, only if it is not wholly visible once the
 * browser has laid it out. Reading its position at once would force a layout
 * of the whole notebook; the intersection is computed with the next frame.
 *
 * The cell holding the review is observed too: in a cell far out of view the
 * browser skips the contents (`content-visibility`), and reports nothing for
 * the review itself until the cell comes near.
 *
 * @param scroller - The notebook's scrolling node.
 * @param review - The review, inside its cell.
 * @param isOpen - Whether the review is still open when the frame comes.
 */
export function revealWhenHidden(
  scroller: HTMLElement,
  review: Widget,
  isOpen: () => boolean
): void {
  const node = review.node;
  const observer = new IntersectionObserver(
    entries => {
      observer.disconnect();
      const own = entries.filter(entry => entry.target === node).pop();
      const hidden = !own || own.intersectionRatio < Private.WHOLLY_VISIBLE;
      if (hidden && isOpen() && scroller.contains(node)) {
        ElementExt.scrollIntoViewIfNeeded(scroller, node);
      }
    },
    { root: scroller, threshold: [0, Private.WHOLLY_VISIBLE] }
  );
  observer.observe(node);
  if (review.parent) {
    observer.observe(review.parent.node);
  }
}

/**
 * Insert a review into a cell, right below its input area.
 *
 * @returns Whether the cell had an input area to put it under.
 */
export function insertReview(cell: Cell, review: Widget): boolean {
  const layout = cell.layout as PanelLayout | null;
  const wrapper = cell.inputArea?.parent;
  const index = layout && wrapper ? layout.widgets.indexOf(wrapper) : -1;
  if (!layout || index < 0) {
    return false;
  }
  layout.insertWidget(index + 1, review);
  return true;
}

/**
 * Show a pending cell inside the cell it is to follow, below its outputs;
 * for the top, inside the first cell, above its input.
 *
 * @param host - The cell it is to follow, or the first cell for the top.
 * @param atTop - Whether the pending cell goes before `host`.
 * @returns Whether the cell has a layout to put it in.
 */
export function insertPending(
  host: Cell,
  pending: Widget,
  atTop: boolean
): boolean {
  const layout = host.layout as PanelLayout | null;
  if (!layout) {
    return false;
  }
  if (atTop) {
    pending.addClass('jp-mod-top');
  }
  layout.insertWidget(atTop ? 0 : layout.widgets.length, pending);
  return true;
}

namespace Private {
  /**
   * How long the review chunk may take to load, in milliseconds.
   */
  export const LOAD_TIMEOUT = 5000;

  /**
   * The visible share of a review's area above which it is left where it is.
   */
  export const WHOLLY_VISIBLE = 0.99;

  /**
   * The support extension of the language a lookup finds, loaded within a
   * second; none otherwise.
   */
  export async function support(
    languages: ILanguages | null,
    find: (languages: ILanguages) => IEditorLanguage | null
  ): Promise<ReviewView.IOptions['extensions']> {
    try {
      const found = languages ? find(languages) : null;
      const language = found
        ? await within(languages!.getLanguage(found), 1000)
        : null;
      return language?.support ? [language.support] : [];
    } catch {
      return [];
    }
  }

  /**
   * Whether a cell is rendered and in the document.
   */
  export function isReady(cell: Cell): boolean {
    return (
      !cell.isDisposed &&
      !cell.isPlaceholder() &&
      cell.isVisible &&
      !!cell.inputArea
    );
  }

  /**
   * A promise's value, or a rejection after `ms` milliseconds.
   */
  export function within<T>(promise: Promise<T>, ms: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = window.setTimeout(() => reject(new Error('timeout')), ms);
      promise.then(
        value => {
          window.clearTimeout(timer);
          resolve(value);
        },
        reason => {
          window.clearTimeout(timer);
          reject(reason);
        }
      );
    });
  }
}
