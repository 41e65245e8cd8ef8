// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { Token } from '@lumino/coreutils';
import { ISignal } from '@lumino/signaling';

/**
 * What other JupyterLab extensions may read of this page's bridge to the
 * jupyter-copilot server extension (docs/extending.md).
 *
 * It only observes: it cannot send to the server, answer the server's
 * requests or keep a change, so an extension built on it cannot reach the
 * notebook past the person's review.
 */
export interface ICopilotBridge {
  /**
   * Settles once the page knows whether jupyter-copilot runs here: `true`
   * when the server extension's feature switch is on and the bridge was
   * opened, `false` when the switch is off or the server extension is absent.
   * It never holds up the application's start.
   */
  readonly ready: Promise<boolean>;

  /**
   * This page's id, sent in the bridge's `hello` (docs/protocol.md section
   * 9), or `null` until {@link ready} settles `true`.
   */
  readonly pageId: string | null;

  /**
   * Whether the page's bridge socket is open now.
   */
  readonly isOpen: boolean;

  /**
   * Whether the administrator's kill switch lets tools run now (docs/protocol.md
   * section 3); `false` before the server said.
   */
  readonly toolsEnabled: boolean;

  /**
   * Emitted when the bridge socket opened, and when {@link toolsEnabled}
   * changed, with no payload: read the properties.
   */
  readonly changed: ISignal<ICopilotBridge, void>;
}

/**
 * The lab extension's bridge, for other extensions to build on.
 */
export const ICopilotBridge = new Token<ICopilotBridge>(
  'jupyterlab-agent-review:ICopilotBridge'
);

/**
 * What other JupyterLab extensions may read of the reviews that agents'
 * proposals opened in this page's notebooks (docs/extending.md).
 *
 * It cannot keep or undo a review: only the person does, with the review's
 * own buttons or commands.
 */
export interface ICopilotReviews {
  /**
   * The reviews this page opened, oldest first: the open ones and the last
   * ones decided. Empty while jupyter-copilot does not run on the page.
   */
  entries(): readonly ICopilotReviews.IEntry[];

  /**
   * Bring an open review into view (its notebook in front, its cell active).
   *
   * @returns Whether the review is open.
   */
  reveal(callId: string): boolean;

  /**
   * Emitted when a review opened, was decided or closed.
   */
  readonly changed: ISignal<ICopilotReviews, void>;
}

/**
 * The types of {@link ICopilotReviews}.
 */
export namespace ICopilotReviews {
  /**
   * One review: `open` until decided; then `keep` or `undo` (the person),
   * `conflict` (the cell changed under it), `withdrawn` or `superseded` (the
   * agent's call ended or was replaced), or `aborted` (the server aborted it).
   */
  export type State =
    | 'open'
    | 'keep'
    | 'undo'
    | 'conflict'
    | 'withdrawn'
    | 'superseded'
    | 'aborted';

  /**
   * One review this page opened.
   */
  export interface IEntry {
    /** The tool call that proposed it (docs/protocol.md section 4). */
    readonly callId: string;
    /** `edit` of an existing cell, or `insert` of a new one. */
    readonly kind: 'edit' | 'insert';
    /** The notebook's path. */
    readonly path: string;
    /** The cell edited, or the cell a new one follows (`null`: the top). */
    readonly cellId: string | null;
    readonly state: State;
    /** When it opened (`performance.now()`). */
    readonly openedAt: number;
  }
}

/**
 * The lab extension's reviews, for other extensions to build on.
 */
export const ICopilotReviews = new Token<ICopilotReviews>(
  'jupyterlab-agent-review:ICopilotReviews'
);
