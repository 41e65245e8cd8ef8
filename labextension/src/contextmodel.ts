// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';
import { IDisposable } from '@lumino/disposable';
import { Debouncer } from '@lumino/polling';
import { ISignal, Signal } from '@lumino/signaling';

import {
  Actions,
  ClientCodes,
  CopilotApi,
  IContextEntry,
  IGetContextResult,
  IOmitted,
  ISelectedCellValue,
  IViewStateValue
} from './api';
import type { ITracebackOmitted } from './tracebacks';

/**
 * What the side panel shows of the context an agent would get, fetched
 * from the server with this page's id. It never keeps cell source.
 */
export class ContextModel implements IDisposable {
  /**
   * Create a model for one page.
   */
  constructor(options: ContextModel.IOptions) {
    this._pageId = options.pageId;
    this._api = options.api;
    this._trans = options.trans;
  }

  /**
   * The latest context, or `null` before the first answer.
   */
  get context(): ContextModel.IContext | null {
    return this._context;
  }

  /**
   * The attached cell, or `null`.
   */
  get attachment(): ContextModel.IAttachment | null {
    return this._attachment;
  }

  /**
   * Emitted when the context changes.
   */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /**
   * Emitted when a cell is attached or detached.
   */
  get attachmentChanged(): ISignal<this, ContextModel.IAttachment | null> {
    return this._attachmentChanged;
  }

  /**
   * Whether the model is disposed.
   */
  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Refresh after a short quiet time (150 ms), folding bursts into one
   * request.
   */
  scheduleRefresh(): void {
    void this._refresher.invoke();
  }

  /**
   * Fetch the context now; only the answer to the latest call is kept.
   *
   * @returns A promise that settles once the context holds an answer asked
   *   for at or after this call: this call's own, or that of a later call
   *   that overtook it.
   */
  refresh(): Promise<void> {
    void this._refresher.stop();
    const seq = ++this._seq;
    const done = this._fetch(seq).then(applied =>
      applied ? undefined : this._latest
    );
    this._latest = done;
    return done;
  }

  /**
   * Attach the selected cell, when exactly one attachable cell is selected.
   *
   * @returns Whether a cell is attached now.
   */
  attach(): boolean {
    const cell = this._context?.cell;
    if (!cell?.expectedSourceHash) {
      return false;
    }
    const { artifactId, cellId, expectedSourceHash } = cell;
    this._setAttachment({ artifactId, cellId, expectedSourceHash });
    return true;
  }

  /**
   * Drop the attachment.
   */
  detach(): void {
    this._setAttachment(null);
  }

  /**
   * The chips the person added with `@`, Fix or Explain, in the order
   * added; they go with the next message (docs/conversations.md, "Context chips").
   */
  get references(): readonly ContextModel.IReference[] {
    return this._references;
  }

  /**
   * Emitted when a chip is added or removed.
   */
  get referencesChanged(): ISignal<this, void> {
    return this._referencesChanged;
  }

  /**
   * Add a chip; one that names the same thing replaces the earlier one.
   */
  addReference(reference: ContextModel.IReference): void {
    const key = referenceKey(reference);
    this._references = [
      ...this._references.filter(r => referenceKey(r) !== key),
      reference
    ];
    this._referencesChanged.emit();
  }

  /**
   * Remove the chips for which `drop` holds.
   */
  removeReferences(
    drop: (reference: ContextModel.IReference) => boolean
  ): void {
    const kept = this._references.filter(r => !drop(r));
    if (kept.length !== this._references.length) {
      this._references = kept;
      this._referencesChanged.emit();
    }
  }

  /**
   * Stop refreshing and drop the signal connections.
   */
  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._refresher.dispose();
    Signal.clearData(this);
  }

  /**
   * Fetch and apply the context; `false` when a later call overtook this one.
   */
  private async _fetch(seq: number): Promise<boolean> {
    const outcome = await this._api.action<IGetContextResult>(
      Actions.getContext,
      {
        data: {},
        pageId: this._pageId
      }
    );
    let next: ContextModel.IContext;
    if (!outcome.error) {
      next = Private.parse(outcome.result.customContext, this._trans);
    } else if (ClientCodes.isOwn(outcome.error)) {
      next = {
        viewState: null,
        cell: null,
        message: this._trans.__('The Copilot server cannot be reached.')
      };
    } else {
      next = { viewState: null, cell: null, message: outcome.error.message };
    }
    if (this._isDisposed) {
      return true;
    }
    if (seq !== this._seq) {
      return false;
    }
    // A refresh follows every review change (docs/protocol.md section 5,
    // step 9, and section 6) and usually finds the same context. Telling
    // the panel only of a real change keeps such a refresh from touching
    // the page: in a long notebook any change to the page costs a frame
    // over every cell, which would delay the agent's next call.
    const same = Private.same(this._context, next);
    this._context = next;
    const a = this._attachment;
    if (a) {
      const cell = next.cell;
      if (
        !cell?.expectedSourceHash ||
        cell.artifactId !== a.artifactId ||
        cell.cellId !== a.cellId
      ) {
        this._setAttachment(null);
      } else if (cell.expectedSourceHash !== a.expectedSourceHash) {
        this._setAttachment({
          ...a,
          expectedSourceHash: cell.expectedSourceHash
        });
      }
    }
    if (!same) {
      this._changed.emit();
    }
    return true;
  }

  private _setAttachment(value: ContextModel.IAttachment | null): void {
    this._attachment = value;
    this._attachmentChanged.emit(value);
  }

  private _pageId: string;
  private _api: CopilotApi;
  private _trans: TranslationBundle;
  private _context: ContextModel.IContext | null = null;
  private _attachment: ContextModel.IAttachment | null = null;
  private _seq = 0;
  private _latest: Promise<void> = Promise.resolve();
  private _refresher = new Debouncer(() => this.refresh(), 150);
  private _isDisposed = false;
  private _changed = new Signal<this, void>(this);
  private _references: readonly ContextModel.IReference[] = [];
  private _referencesChanged = new Signal<this, void>(this);
  private _attachmentChanged = new Signal<
    this,
    ContextModel.IAttachment | null
  >(this);
}

/**
 * The types of the context model.
 */
export namespace ContextModel {
  /**
   * The options of a context model.
   */
  export interface IOptions {
    /** The id of this page, sent with every get-context call. */
    pageId: string;
    /** The client of the server's API. */
    api: CopilotApi;
    /** The words of the panel, in the person's language. */
    trans: TranslationBundle;
  }

  /**
   * The selected cell as the panel shows it: metadata and a line count only.
   */
  export interface ICell {
    artifactId: string;
    cellId: string;
    cellType: string;
    label: string;
    /** The number of lines, `0` for an empty source, `null` when omitted. */
    lineCount: number | null;
    /** The hash of the source, absent when the source was omitted. */
    expectedSourceHash?: string;
    omitted?: IOmitted;
  }

  /**
   * The context shown by the panel.
   */
  export interface IContext {
    viewState: IViewStateValue | null;
    cell: ICell | null;
    /** A refusal or failure to show instead of the context. */
    message?: string;
  }

  /**
   * The attached cell, sent with the next message of the conversation.
   */
  export interface IAttachment {
    artifactId: string;
    cellId: string;
    expectedSourceHash: string;
  }

  /**
   * A chip the person added, as the server takes it in a message's
   * `references`, with the label the chip shows.
   */
  export type IReference = { label: string } & (
    | ({ kind: 'cell' } & IAttachment)
    | { kind: 'variable'; name: string }
    | { kind: 'file'; path: string }
    | ({
        kind: 'error';
        ename: string;
        evalue: string;
        traceback: string;
        omitted: ITracebackOmitted | null;
      } & IAttachment)
  );
}

/**
 * What names the thing a chip stands for: two chips with the same key are one.
 */
export function referenceKey(reference: ContextModel.IReference): string {
  switch (reference.kind) {
    case 'variable':
      return `variable:${reference.name}`;
    case 'file':
      return `file:${reference.path}`;
    default:
      return `${reference.kind}:${reference.artifactId}:${reference.cellId}`;
  }
}

/**
 * A chip as a message carries it: everything but its label.
 */
export function wireReference(
  reference: ContextModel.IReference
): Record<string, unknown> {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  const { label, ...wire } = reference;
  return wire;
}

namespace Private {
  /**
   * Whether two contexts show the same thing. Both are small parsed
   * objects built in the same key order, without source.
   */
  export function same(
    a: ContextModel.IContext | null,
    b: ContextModel.IContext
  ): boolean {
    return a !== null && JSON.stringify(a) === JSON.stringify(b);
  }

  /**
   * Reduce the server's entries to what the panel shows, dropping source.
   */
  export function parse(
    entries: IContextEntry[],
    trans: TranslationBundle
  ): ContextModel.IContext {
    const view = entries.find(e => e.name === 'notebook_view_state');
    const sel = entries.find(e => e.name === 'notebook_selected_cell') as
      IContextEntry<ISelectedCellValue> | undefined;
    let cell: ContextModel.ICell | null = null;
    if (sel) {
      const v = sel.value;
      const source = typeof v.source === 'string' ? v.source : null;
      cell = {
        artifactId: v.artifactId,
        cellId: v.cellId,
        cellType: v.cellType,
        label: sel.reference?.label ?? trans.__('Selected %1 cell', v.cellType),
        lineCount:
          source === null
            ? null
            : source === ''
              ? 0
              : source.split('\n').length,
        expectedSourceHash: source === null ? undefined : v.expectedSourceHash,
        omitted: sel.omitted
      };
    }
    return { viewState: (view?.value as IViewStateValue) ?? null, cell };
  }
}
