// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';
import { JupyterFrontEnd } from '@jupyterlab/application';
import { Cell, ICellModel } from '@jupyterlab/cells';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { IDisposable } from '@lumino/disposable';
import { ElementExt } from '@lumino/domutils';
import { ISignal, Signal } from '@lumino/signaling';

import { ActionError, Bridge } from '../bridge';
import {
  checkInsert,
  checkProposal,
  IEditProposal,
  IInsertProposal,
  parseInsert,
  parseProposal
} from './checks';
import {
  findCell,
  insertPending,
  insertReview,
  loadReviewModule,
  revealWhenHidden,
  showCell
} from './placement';
import type { Review } from './review';
import { highlightedSource, ILanguages, languageExtensions } from './source';
import type { ReviewView } from './view';

/**
 * Answers the `notebook_edit_cell` and `notebook_insert_cell` actions of
 * this page: it checks each proposal against the live notebook, opens its
 * review (inside the cell, or as a pending cell below the cell it is to
 * follow) and keeps track of the open reviews, at most one edit per cell.
 *
 * The review's code and the merge view are loaded on the first proposal,
 * in their own chunk. There is never a fallback that writes without review.
 */
export class ReviewManager implements IDisposable {
  /**
   * Create the manager; register {@link invoke} and {@link abort} as the
   * bridge's handlers of the invoke and abort actions.
   */
  constructor(options: ReviewManager.IOptions) {
    this._shell = options.shell;
    this._notebooks = options.notebooks;
    this._bridge = options.bridge;
    this._languages = options.languages ?? null;
    this._onChange = options.onChange ?? (() => undefined);
    this._trans = options.trans;
    this._bridge.toolsEnabledChanged.connect(this._onToolsEnabled, this);
    this._bridge.welcomed.connect(this._onToolsEnabled, this);
  }

  /**
   * Whether the manager is disposed.
   */
  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Handle `edit-cell.invoke`: check the proposal against the live model in
   * the contract's order, bring the cell into view and open its review.
   *
   * @returns `{diffReviewOpened: true}` once the review is shown.
   * @throws ActionError with the code of the first failing check.
   */
  async invoke(
    data: Record<string, unknown>
  ): Promise<Record<string, unknown>> {
    const proposal = parseProposal(data);
    if (!proposal) {
      throw new ActionError('invalid-input', 'The edit request is malformed.');
    }
    const { callId } = proposal;
    const opened = { diffReviewOpened: true };
    if (this._isRepeat(callId, 'edit')) {
      // A repeated request never opens a second review.
      return opened;
    }
    let target = this._check(proposal);
    const pending = this._startPending(callId, 'edit');
    try {
      const [ui, extensions] = await Promise.all([
        loadReviewModule(),
        languageExtensions(this._languages, target.model.mimeType)
      ]);
      if (!ui || !(await showCell(target.panel.content, target.cell))) {
        throw new ActionError(
          'diff-unavailable',
          'The diff review cannot be shown for this cell.'
        );
      }
      if (pending.aborted) {
        throw new ActionError(
          'diff-unavailable',
          'The proposal was withdrawn before it opened.'
        );
      }
      // Loading and scrolling took time: every check must hold now.
      target = this._check(proposal);
      const view = new ui.ReviewView({
        callId,
        cellId: proposal.cellId,
        original: target.model.sharedModel.getSource(),
        proposed: proposal.newSource,
        extensions,
        trans: this._trans
      });
      if (!insertReview(target.cell, view)) {
        view.dispose();
        throw new ActionError(
          'diff-unavailable',
          'The diff review cannot be shown for this cell.'
        );
      }
      this._supersede(target.panel, proposal.cellId);
      const change = ui.Review.editChange(
        proposal,
        target.cell,
        this._trans,
        () => view.chosen()
      );
      this._track(ui, change, target.panel, view);
    } finally {
      this._pending.delete(callId);
    }
    this._onChange();
    return opened;
  }

  /**
   * Handle `insert-cell.invoke` (docs/protocol.md section 11.1): check the
   * request against the live model, bring the cell it is to follow into
   * view and show the pending cell below it (above the first cell for an
   * insert at the top). The notebook's cells stay as they are.
   *
   * @returns `{reviewOpened: true}` once the pending cell is shown.
   * @throws ActionError with the code of the first failing check.
   */
  async invokeInsert(
    data: Record<string, unknown>
  ): Promise<Record<string, unknown>> {
    const proposal = parseInsert(data);
    if (!proposal) {
      throw new ActionError(
        'invalid-input',
        'The insert request is malformed.'
      );
    }
    const { callId } = proposal;
    const opened = { reviewOpened: true };
    if (this._isRepeat(callId, 'insert')) {
      return opened;
    }
    let target = this._checkInsert(proposal);
    const pending = this._startPending(callId, 'insert');
    try {
      const unavailable = new ActionError(
        'diff-unavailable',
        'The pending cell cannot be shown in this notebook.'
      );
      const mimeType =
        proposal.cellType === 'code'
          ? target.panel.content.codeMimetype
          : proposal.cellType === 'markdown'
            ? 'text/x-ipythongfm'
            : 'text/plain';
      const [ui, content] = await Promise.all([
        loadReviewModule(),
        highlightedSource(this._languages, mimeType, proposal.source)
      ]);
      if (!ui || !(await showCell(target.panel.content, target.host))) {
        throw unavailable;
      }
      if (pending.aborted) {
        throw new ActionError(
          'diff-unavailable',
          'The proposal was withdrawn before it opened.'
        );
      }
      target = this._checkInsert(proposal);
      const view = new ui.ReviewView({
        callId,
        operation: 'insert',
        cellId: proposal.afterCellId,
        cellType: proposal.cellType,
        original: '',
        proposed: proposal.source,
        content,
        trans: this._trans
      });
      const atTop = proposal.afterCellId === null;
      if (!insertPending(target.host, view, atTop)) {
        view.dispose();
        throw unavailable;
      }
      const change = ui.Review.insertChange(
        proposal,
        target.panel,
        this._trans,
        atTop ? target.host.model.id : null
      );
      this._track(ui, change, target.panel, view);
    } finally {
      this._pending.delete(callId);
    }
    this._onChange();
    return opened;
  }

  /**
   * Handle `edit-cell.abort`: withdraw the call's open review, or make sure
   * a review still being prepared never opens. The server records the
   * withdrawal itself, so no `review` message is sent.
   *
   * @returns `{withdrawn}`, false for an unknown or already decided call.
   */
  abort(data: Record<string, unknown>): Record<string, unknown> {
    return this._abort(data, 'edit');
  }

  /**
   * Handle `insert-cell.abort`: withdraw the call's pending cell, or make
   * sure one still being prepared never shows.
   *
   * @returns `{withdrawn}`, false for an unknown or already decided call.
   */
  abortInsert(data: Record<string, unknown>): Record<string, unknown> {
    return this._abort(data, 'insert');
  }

  private _abort(
    data: Record<string, unknown>,
    operation: Private.Operation
  ): Record<string, unknown> {
    const callId = typeof data.callId === 'string' ? data.callId : '';
    const pending = this._pending.get(callId);
    if (pending?.operation === operation) {
      pending.aborted = true;
      return { withdrawn: true };
    }
    const review = this._reviews.get(callId);
    if (
      !review ||
      review.isDecided ||
      Private.operationOf(review) !== operation
    ) {
      return { withdrawn: false };
    }
    review.dispose();
    this._onChange();
    return { withdrawn: true };
  }

  /**
   * The open review the keyboard commands act on, in the current notebook:
   * the one last moved to with {@link next}, unless the person went to
   * another cell with a review of its own; else the one in the active cell
   * (an edit before a pending cell below it).
   */
  current(): Review | null {
    const panel = this._currentPanel();
    if (!panel) {
      return null;
    }
    const active = panel.content.activeCell;
    const open = this._openIn(panel);
    const here = open.filter(
      r => !!active && active.node.contains(r.view.node)
    );
    const marked = this._marked;
    if (
      marked &&
      open.includes(marked) &&
      (!here.length || here.includes(marked))
    ) {
      return marked;
    }
    return here.find(r => r.change.cellId !== null) ?? here[0] ?? null;
  }

  /**
   * Move to the next open review of the current notebook, in the
   * notebook's order (pending cells for the top first), after the current
   * one; from the last, back to the first. Its cell becomes the active
   * one, and the review is scrolled into view and marked.
   *
   * @returns The review moved to, or `null` when there is none.
   */
  next(): Review | null {
    const panel = this._currentPanel();
    if (!panel) {
      return null;
    }
    const notebook = panel.content;
    const placed = this._openIn(panel).map(review => ({
      review,
      index: notebook.widgets.findIndex(w => w.node.contains(review.view.node))
    }));
    if (!placed.length) {
      return null;
    }
    // Stable: reviews of one cell stay in the order they opened.
    placed.sort((a, b) => a.index - b.index);
    const from = this.current();
    const at = placed.findIndex(p => p.review === from);
    const after =
      at >= 0
        ? placed[(at + 1) % placed.length]
        : (placed.find(p => p.index >= notebook.activeCellIndex) ?? placed[0]);
    this._goTo(after.review, after.index);
    return after.review;
  }

  /**
   * Emitted when a review opened, was decided or closed.
   */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /**
   * Whether Keep can work now: false while the administrator has turned
   * tool edits off (the kill switch), or before the server said. The
   * `changed` signal follows it.
   */
  get canKeep(): boolean {
    return this._bridge.toolsEnabled;
  }

  /**
   * The reviews this page opened, oldest first, with their state: the
   * open ones and the last ones decided (at most {@link Private.KEPT}).
   */
  entries(): readonly ReviewManager.IEntry[] {
    return [...this._entries.values()];
  }

  /**
   * Bring a review into view: its notebook's tab in front, its cell the
   * active one, the review scrolled into view and marked as current.
   *
   * @returns Whether the review is open.
   */
  reveal(callId: string): boolean {
    const review = this._reviews.get(callId);
    if (!review || review.isDecided || review.isDisposed) {
      return false;
    }
    this._shell.activateById(review.panel.id);
    const index = review.panel.content.widgets.findIndex(w =>
      w.node.contains(review.view.node)
    );
    this._goTo(review, index);
    return true;
  }

  /**
   * Keep each of these reviews that is still open, as its own Keep button
   * would: each asks the server and checks its cell again, so one that is
   * no longer valid applies nothing and says why. The notebooks stay where
   * the person is: no active cell moves, no focus is taken, and the active
   * cell keeps its place on screen.
   *
   * @returns How many Keeps were started.
   */
  keepAll(callIds: readonly string[]): number {
    return this._each(callIds, review => review.keepInPlace());
  }

  /**
   * Undo each of these reviews that is still open, leaving the active cell
   * where it is on screen.
   *
   * @returns How many were undone.
   */
  undoAll(callIds: readonly string[]): number {
    return this._each(callIds, review => review.undoInPlace());
  }

  private _each(
    callIds: readonly string[],
    act: (review: Review) => boolean
  ): number {
    let count = 0;
    for (const callId of callIds) {
      const review = this._reviews.get(callId);
      if (review && !review.isDecided && !review.isDisposed && act(review)) {
        count++;
      }
    }
    return count;
  }

  private _goTo(review: Review, index: number): void {
    const notebook = review.panel.content;
    this._mark(review);
    if (index >= 0) {
      notebook.activeCellIndex = index;
      notebook.deselectAll();
      notebook.mode = 'command';
      notebook.node.focus({ preventScroll: true });
    }
    const scroller = notebook.outerNode;
    if (scroller.contains(review.view.node)) {
      ElementExt.scrollIntoViewIfNeeded(scroller, review.view.node);
    }
  }

  /**
   * Close every review without reporting a decision, and disconnect.
   */
  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._bridge.toolsEnabledChanged.disconnect(this._onToolsEnabled, this);
    this._bridge.welcomed.disconnect(this._onToolsEnabled, this);
    this._pending.forEach(pending => (pending.aborted = true));
    this._reviews.forEach(review => review.dispose());
  }

  /**
   * The page's checks in the contract's order, against the live model.
   */
  private _check(proposal: IEditProposal): Private.ITarget {
    const current = this._shell.currentWidget;
    const panel = this._notebooks.currentWidget;
    if (!panel || panel !== current || panel.isDisposed || !panel.model) {
      throw new ActionError(
        'not-authoring-view',
        'The active tab is not a notebook editor.'
      );
    }
    const found = findCell(panel, proposal.cellId);
    const facts = found && {
      cellType: found.model.type,
      editable: found.model.sharedModel.getMetadata('editable'),
      source: found.model.sharedModel.getSource()
    };
    // The local path: under real-time collaboration `context.path` carries
    // the collaborative drive's prefix, which the server never reports.
    const failure = checkProposal(proposal, panel.context.localPath, facts);
    if (failure) {
      throw new ActionError(failure.code, failure.message);
    }
    return { panel, ...found! };
  }

  /**
   * The page's checks of an insert, against the live model: the view, the
   * path, and the cell it is to follow (section 11.1).
   */
  private _checkInsert(proposal: IInsertProposal): Private.IInsertTarget {
    const current = this._shell.currentWidget;
    const panel = this._notebooks.currentWidget;
    if (!panel || panel !== current || panel.isDisposed || !panel.model) {
      throw new ActionError(
        'not-authoring-view',
        'The active tab is not a notebook editor.'
      );
    }
    const anchor =
      proposal.afterCellId === null
        ? null
        : findCell(panel, proposal.afterCellId);
    const failure = checkInsert(proposal, panel.context.localPath, !!anchor);
    if (failure) {
      throw new ActionError(failure.code, failure.message);
    }
    // For the top, the pending cell shows above the first cell.
    const host = anchor?.cell ?? panel.content.widgets[0];
    if (!host) {
      throw new ActionError(
        'diff-unavailable',
        'The pending cell cannot be shown in a notebook without cells.'
      );
    }
    return { panel, host };
  }

  /**
   * Whether a request repeats an open review of the same call and tool;
   * throws when the call already has another review, or one on its way.
   */
  private _isRepeat(callId: string, operation: Private.Operation): boolean {
    const open = this._reviews.get(callId);
    if (open && !open.isDecided && Private.operationOf(open) === operation) {
      return true;
    }
    if (open || this._pending.has(callId)) {
      throw new ActionError(
        'diff-unavailable',
        'This call already has a review.'
      );
    }
    return false;
  }

  private _startPending(
    callId: string,
    operation: Private.Operation
  ): Private.IPending {
    const pending = { aborted: false, operation };
    this._pending.set(callId, pending);
    return pending;
  }

  /**
   * Take an open view over as a review, and follow it until it closes.
   */
  private _track(
    ui: { Review: typeof Review },
    change: Review.IChange,
    panel: NotebookPanel,
    view: ReviewView
  ): void {
    const review = new ui.Review({
      change,
      panel,
      view,
      bridge: this._bridge,
      onChange: () => this._recorded(),
      trans: this._trans
    });
    this._reviews.set(change.callId, review);
    this._entries.delete(change.callId);
    this._entries.set(change.callId, {
      callId: change.callId,
      kind: change.cellId === null ? 'insert' : 'edit',
      path: panel.context.localPath,
      // An insert names the cell it follows (none for the top).
      cellId: change.cellId ?? (view.node.dataset.afterCellId || null),
      state: 'open',
      openedAt: performance.now()
    });
    this._forgetOld();
    this._changed.emit();
    review.closed.connect(this._onClosed, this);
    revealWhenHidden(panel.content.outerNode, view, () => !review.isDisposed);
  }

  /**
   * Close the reviews of the same cell for a newer proposal.
   */
  private _supersede(panel: NotebookPanel, cellId: string): void {
    for (const review of [...this._reviews.values()]) {
      if (review.panel === panel && review.change.cellId === cellId) {
        review.supersede();
      }
    }
  }

  /**
   * The notebook in front, when it is the current notebook.
   */
  private _currentPanel(): NotebookPanel | null {
    const panel = this._notebooks.currentWidget;
    return panel && panel === this._shell.currentWidget && !panel.isDisposed
      ? panel
      : null;
  }

  /**
   * The open, undecided reviews of a notebook, in the order they opened.
   */
  private _openIn(panel: NotebookPanel): Review[] {
    return [...this._reviews.values()].filter(
      r => r.panel === panel && !r.isDecided && !r.isDisposed
    );
  }

  private _mark(review: Review | null): void {
    if (this._marked && !this._marked.isDisposed) {
      this._marked.view.setCurrent(false);
    }
    this._marked = review;
    review?.view.setCurrent(true);
  }

  private _onClosed(review: Review): void {
    if (this._marked === review) {
      this._marked = null;
    }
    const callId = review.change.callId;
    if (this._reviews.get(callId) === review) {
      this._reviews.delete(callId);
    }
    const entry = this._entries.get(callId);
    if (entry && entry.state === 'open') {
      // Closed without a decision of the person: the call was aborted.
      this._entries.set(callId, {
        ...entry,
        state: review.decision ?? 'aborted'
      });
    }
    this._changed.emit();
  }

  /**
   * A review reported a decision (or opened): update its entry, then tell
   * the page's context.
   */
  private _recorded(): void {
    for (const [callId, review] of this._reviews) {
      const entry = this._entries.get(callId);
      if (entry && review.decision && entry.state !== review.decision) {
        this._entries.set(callId, { ...entry, state: review.decision });
      }
    }
    this._changed.emit();
    this._onChange();
  }

  private _forgetOld(): void {
    const closed = [...this._entries.values()].filter(e => e.state !== 'open');
    for (const entry of closed.slice(
      0,
      Math.max(0, closed.length - Private.KEPT)
    )) {
      this._entries.delete(entry.callId);
    }
  }

  private _onToolsEnabled(): void {
    this._reviews.forEach(review => review.toolsEnabledChanged());
    this._changed.emit();
  }

  private _shell: JupyterFrontEnd.IShell;
  private _notebooks: INotebookTracker;
  private _trans: TranslationBundle;
  private _bridge: Bridge;
  private _languages: ILanguages | null;
  private _onChange: () => void;
  private _pending = new Map<string, Private.IPending>();
  private _reviews = new Map<string, Review>();
  private _marked: Review | null = null;
  private _entries = new Map<string, ReviewManager.IEntry>();
  private _changed = new Signal<this, void>(this);
  private _isDisposed = false;
}

/**
 * The types of the review manager.
 */
export namespace ReviewManager {
  /**
   * The options of a review manager.
   */
  export interface IOptions {
    /** The application shell; its current widget must be the notebook. */
    shell: JupyterFrontEnd.IShell;
    /** The notebook tracker. */
    notebooks: INotebookTracker;
    /** The page bridge, for Keep verdicts, decisions and the kill switch. */
    bridge: Bridge;
    /** The editor languages, for highlighting in the diff; optional. */
    languages?: ILanguages | null;
    /** Called once after a review opened, was decided or was withdrawn. */
    onChange?: () => void;
    /** The words of the reviews, in the person's language. */
    trans: TranslationBundle;
  }

  /**
   * The state of a review as the panel lists it: `open`, the person's
   * decision, or `aborted` when the call was aborted while it was open.
   */
  export type EntryState = 'open' | Review.Decision | 'aborted';

  /**
   * One review this page opened.
   */
  export interface IEntry {
    readonly callId: string;
    /** `edit` of an existing cell, or `insert` of a new one. */
    readonly kind: 'edit' | 'insert';
    /** The notebook's path. */
    readonly path: string;
    /** The cell edited, or the cell a new one follows (`null`: the top). */
    readonly cellId: string | null;
    readonly state: EntryState;
    /** When it opened (`performance.now()`). */
    readonly openedAt: number;
  }
}

namespace Private {
  /**
   * How many decided reviews the list keeps besides the open ones.
   */
  export const KEPT = 20;

  /**
   * The notebook, cell widget and cell model an invoke targets.
   */
  export interface ITarget {
    panel: NotebookPanel;
    cell: Cell;
    model: ICellModel;
  }

  /**
   * The notebook of an insert, and the cell whose widget shows the pending
   * cell: the one it is to follow, or the first for the top.
   */
  export interface IInsertTarget {
    panel: NotebookPanel;
    host: Cell;
  }

  /**
   * Which tool a review or a review being prepared belongs to.
   */
  export type Operation = 'edit' | 'insert';

  /**
   * A review being prepared; `aborted` once its call was aborted.
   */
  export interface IPending {
    aborted: boolean;
    operation: Operation;
  }

  /**
   * The tool of an open review.
   */
  export function operationOf(review: Review): Operation {
    return review.change.cellId === null ? 'insert' : 'edit';
  }
}
