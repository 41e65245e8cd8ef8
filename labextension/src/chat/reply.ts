// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { IRenderMimeRegistry, MimeModel } from '@jupyterlab/rendermime';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Panel, Widget } from '@lumino/widgets';

import { ReplySanitizer } from './sanitizer';

/**
 * The agent's reply, rendered as Markdown with JupyterLab's renderer (as
 * untrusted content, through {@link ReplySanitizer}: no command links, no
 * remote resources, no forms) or, without a rendermime registry, as plain
 * text. While the reply streams it is rendered again at most every
 * {@link ReplyView.THROTTLE_MS}.
 */
export class ReplyView extends Panel {
  /**
   * Create an empty reply.
   */
  constructor(rendermime: IRenderMimeRegistry | null) {
    super();
    this.addClass('jp-Copilot-Reply');
    if (rendermime) {
      this._renderer = ReplySanitizer.registry(rendermime).createRenderer('text/markdown');
      this.addWidget(this._renderer);
    } else {
      const plain = new Widget();
      plain.addClass('jp-Copilot-ReplyText');
      this._plain = plain.node;
      this.addWidget(plain);
    }
  }

  /**
   * How often a streaming reply is rendered again, in milliseconds.
   */
  static readonly THROTTLE_MS = 100;

  /**
   * Show the reply so far.
   *
   * @param text - The whole reply, in Markdown.
   * @param streaming - Whether more may come; the last text is rendered at once.
   */
  setText(text: string, streaming: boolean): void {
    if (text === this._wanted && !streaming && !this._timer) {
      return;
    }
    this._wanted = text;
    this.setHidden(text === '');
    window.clearTimeout(this._timer);
    this._timer = 0;
    const wait = streaming ? this._last + ReplyView.THROTTLE_MS - Date.now() : 0;
    if (wait > 0) {
      this._timer = window.setTimeout(() => this._render(), wait);
    } else {
      this._render();
    }
  }

  /**
   * Stop a pending render.
   */
  dispose(): void {
    window.clearTimeout(this._timer);
    super.dispose();
  }

  private _render(): void {
    this._timer = 0;
    this._last = Date.now();
    if (this._plain) {
      this._plain.textContent = this._wanted;
      return;
    }
    if (this._rendering) {
      // One render at a time; the newest text follows when it ends.
      return;
    }
    const text = this._wanted;
    this._rendering = true;
    const model = new MimeModel({ data: { 'text/markdown': text }, trusted: false });
    this._renderer!.renderModel(model)
      .catch(() => undefined)
      .then(() => {
        this._rendering = false;
        if (text !== this._wanted && !this._timer && !this.isDisposed) {
          this._render();
        }
      });
  }

  private _renderer: IRenderMime.IRenderer | null = null;
  private _plain: HTMLElement | null = null;
  private _wanted = '';
  private _last = 0;
  private _timer = 0;
  private _rendering = false;
}
