// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { IRenderMimeRegistry, MimeModel } from '@jupyterlab/rendermime';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Panel, Widget } from '@lumino/widgets';

import { settledEnd } from './blocks';
import { highlightCode } from './highlight';
import { ReplySanitizer } from './sanitizer';

/**
 * The agent's reply, rendered as Markdown with JupyterLab's renderer (as
 * untrusted content, through {@link ReplySanitizer}: no command links, no
 * remote resources, no forms) or, without a rendermime registry, as plain
 * text.
 *
 * A long reply costs little while it streams: the blocks no later text can
 * change ({@link settledEnd}) are rendered once each, and only the open tail
 * again, at most every {@link ReplyView.THROTTLE_MS} and never more than a
 * fifth of the time.
 */
export class ReplyView extends Panel {
  /**
   * Create an empty reply.
   */
  constructor(rendermime: IRenderMimeRegistry | null) {
    super();
    this.addClass('jp-Copilot-Reply');
    if (rendermime) {
      this._registry = ReplySanitizer.registry(rendermime);
      this._tail = this._registry.createRenderer('text/markdown');
      this.addWidget(this._tail);
    } else {
      const plain = new Widget();
      plain.addClass('jp-Copilot-ReplyText');
      this._plain = plain.node;
      this.addWidget(plain);
    }
  }

  /**
   * How often a streaming reply is rendered again at most, in milliseconds.
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
    const wait = streaming ? this._last + this._interval - Date.now() : 0;
    if (wait > 0) {
      this._timer = window.setTimeout(() => this._render(), wait);
    } else {
      this._render();
    }
    this._showBusy();
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
    const text = this._wanted;
    if (this._plain) {
      this._renderPlain(text);
      this._showBusy();
      return;
    }
    if (this._rendering) {
      // One render at a time; the newest text follows when it ends.
      return;
    }
    if (!text.startsWith(this._shown)) {
      // Not the same reply grown: start over.
      for (const block of [...this.widgets]) {
        if (block !== this._tail) {
          block.dispose();
        }
      }
      this._shown = '';
    }
    const end = settledEnd(text, this._shown.length);
    if (end > this._shown.length) {
      const block = this._registry!.createRenderer('text/markdown');
      this.insertWidget(this.widgets.length - 1, block);
      void this._track(
        block
          .renderModel(Private.model(text.slice(this._shown.length, end)))
          .then(() => this._highlight(block))
      );
      this._shown = text.slice(0, end);
    }
    this._rendering = true;
    const started = Date.now();
    const tail = this._tail!;
    void this._track(
      tail
        .renderModel(Private.model(text.slice(end)))
        .then(() => this._highlight(tail))
        .catch(() => undefined)
        .then(() => {
          this._rendering = false;
          this._interval = Math.max(
            ReplyView.THROTTLE_MS,
            4 * (Date.now() - started)
          );
          if (text !== this._wanted && !this._timer && !this.isDisposed) {
            this._render();
          }
        })
    );
  }

  /**
   * Count a render until it ends, failed or not: the reply is busy
   * (`aria-busy`) while any runs or one is due, so that assistive technology,
   * and whoever reads the reply, waits until it shows the whole text.
   */
  private _track(render: Promise<unknown>): Promise<void> {
    this._renders++;
    this._showBusy();
    return render
      .catch(() => undefined)
      .then(() => {
        this._renders--;
        this._showBusy();
      });
  }

  private _showBusy(): void {
    const busy = this._renders > 0 || this._timer !== 0;
    this.node.setAttribute('aria-busy', busy ? 'true' : 'false');
  }

  /**
   * Colour the code blocks of a rendered block; the sanitizer left them
   * plain (see {@link highlightCode}).
   */
  private _highlight(block: IRenderMime.IRenderer): Promise<void> {
    return highlightCode(block.node, this._registry?.markdownParser);
  }

  private _renderPlain(text: string): void {
    const node = this._plain!;
    if (this._shown && text.startsWith(this._shown)) {
      node.append(text.slice(this._shown.length));
    } else {
      node.textContent = text;
    }
    this._shown = text;
  }

  private _registry: IRenderMimeRegistry | null = null;
  private _tail: IRenderMime.IRenderer | null = null;
  private _plain: HTMLElement | null = null;
  /** What the settled blocks (or the plain text) show. */
  private _shown = '';
  private _wanted = '';
  private _last = 0;
  private _interval = ReplyView.THROTTLE_MS;
  private _timer = 0;
  private _rendering = false;
  /** Renders started and not yet ended. */
  private _renders = 0;
}

namespace Private {
  export function model(markdown: string): MimeModel {
    return new MimeModel({
      data: { 'text/markdown': markdown },
      trusted: false
    });
  }
}
