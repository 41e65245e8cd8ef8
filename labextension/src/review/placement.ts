// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { Cell, ICellModel } from '@jupyterlab/cells';
import { ElementExt } from '@lumino/domutils';
import { Notebook, NotebookPanel } from '@jupyterlab/notebook';
import { PanelLayout, Widget } from '@lumino/widgets';

import { pollUntil, within } from '../polling';
import type { Review } from './review';
import type { ReviewView } from './view';

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
    return await within(loaded, Private.LOAD_TIMEOUT);
  } catch {
    return null;
  }
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
 * browser has laid it out, and again should it grow out of view while it
 * lays out (see `Private.keepInViewWhileGrowing`). Reading its position at once would force a layout
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
  Private.keepInViewWhileGrowing(scroller, node, isOpen);
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
   * How long a new review is kept in view while it lays out, in
   * milliseconds.
   */
  export const SETTLE_MS = 1000;

  /**
   * For its first {@link SETTLE_MS} milliseconds, bring a review that
   * changes size back into view: the diff lays out its parts in the frames
   * after the first, and the browser's scroll anchoring may push the top of
   * a growing review out of view. Only its own changes of size count, never
   * a scroll; and the first key, click or wheel of the person in the
   * notebook ends the watch.
   */
  export function keepInViewWhileGrowing(
    scroller: HTMLElement,
    node: HTMLElement,
    isOpen: () => boolean
  ): void {
    // Called once it is laid out, then at each change of its size; a review
    // wholly in view stays where it is.
    const resizes = new ResizeObserver(() => {
      if (isOpen() && scroller.contains(node)) {
        ElementExt.scrollIntoViewIfNeeded(scroller, node);
      }
    });
    const events = ['wheel', 'pointerdown', 'keydown', 'touchstart'];
    const stop = (): void => {
      resizes.disconnect();
      events.forEach(e => scroller.removeEventListener(e, stop, true));
    };
    events.forEach(e =>
      scroller.addEventListener(e, stop, { capture: true, passive: true })
    );
    resizes.observe(node);
    window.setTimeout(stop, SETTLE_MS);
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
}
