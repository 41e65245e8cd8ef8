// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { PromiseDelegate } from '@lumino/coreutils';
import { ISignal, Signal } from '@lumino/signaling';

import { ICopilotBridge, ICopilotReviews } from './tokens';

/**
 * The public face of this page's bridge ({@link ICopilotBridge}), handed out
 * at once by the plugin and attached to the real bridge once the server
 * extension answered.
 */
export class BridgeHandle implements ICopilotBridge {
  get ready(): Promise<boolean> {
    return this._ready.promise;
  }

  get pageId(): string | null {
    return this._bridge?.pageId ?? null;
  }

  get isOpen(): boolean {
    return this._bridge?.isOpen ?? false;
  }

  get toolsEnabled(): boolean {
    return this._bridge?.toolsEnabled ?? false;
  }

  get changed(): ISignal<ICopilotBridge, void> {
    return this._changed;
  }

  /**
   * Attach the page's bridge and settle {@link ready} `true`.
   */
  attach(bridge: BridgeHandle.IBridge): void {
    if (this._bridge) {
      return;
    }
    this._bridge = bridge;
    bridge.opened.connect(() => this._changed.emit());
    bridge.toolsEnabledChanged.connect(() => this._changed.emit());
    this._ready.resolve(true);
  }

  /**
   * Settle {@link ready} `false`: jupyter-copilot does not run on this page.
   */
  absent(): void {
    if (!this._bridge) {
      this._ready.resolve(false);
    }
  }

  private _bridge: BridgeHandle.IBridge | null = null;
  private _ready = new PromiseDelegate<boolean>();
  private _changed = new Signal<ICopilotBridge, void>(this);
}

/**
 * The types of {@link BridgeHandle}.
 */
export namespace BridgeHandle {
  /**
   * What the handle reads of the page's bridge (`Bridge` in bridge.ts).
   */
  export interface IBridge {
    readonly pageId: string;
    readonly isOpen: boolean;
    readonly toolsEnabled: boolean;
    readonly opened: ISignal<unknown, void>;
    readonly toolsEnabledChanged: ISignal<unknown, boolean>;
  }
}

/**
 * The public face of this page's reviews ({@link ICopilotReviews}): empty
 * until the review manager is attached.
 */
export class ReviewsHandle implements ICopilotReviews {
  entries(): readonly ICopilotReviews.IEntry[] {
    return (this._reviews?.entries() ?? []).map(e => ({ ...e }));
  }

  reveal(callId: string): boolean {
    return this._reviews?.reveal(callId) ?? false;
  }

  get changed(): ISignal<ICopilotReviews, void> {
    return this._changed;
  }

  /**
   * Attach the page's review manager.
   */
  attach(reviews: ReviewsHandle.IReviews): void {
    if (this._reviews) {
      return;
    }
    this._reviews = reviews;
    reviews.changed.connect(() => this._changed.emit());
    this._changed.emit();
  }

  private _reviews: ReviewsHandle.IReviews | null = null;
  private _changed = new Signal<ICopilotReviews, void>(this);
}

/**
 * The types of {@link ReviewsHandle}.
 */
export namespace ReviewsHandle {
  /**
   * What the handle reads of the page's reviews (`ReviewManager` in
   * review/manager.ts).
   */
  export interface IReviews {
    entries(): readonly ICopilotReviews.IEntry[];
    reveal(callId: string): boolean;
    readonly changed: ISignal<unknown, void>;
  }
}
