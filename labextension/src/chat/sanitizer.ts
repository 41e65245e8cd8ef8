// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';

/**
 * The sanitizer of agent replies: JupyterLab's own, then stricter.
 *
 * An agent's reply is data (a prompt-injected agent writes whatever it is
 * told to), so after the app's sanitizer this one removes everything that
 * could act or fetch without the person: command links
 * (`data-commandlinker-*`), event handlers and styles, forms and buttons,
 * and every remote resource. Images and media become plain links that
 * load nothing until clicked; frames, objects and embeds are dropped. The
 * HTML is filtered in an inert document, so nothing loads while it is.
 */
export class ReplySanitizer implements IRenderMime.ISanitizer {
  /**
   * Wrap the app's sanitizer.
   */
  constructor(base: IRenderMime.ISanitizer) {
    this._base = base;
  }

  /**
   * Replies never carry command links.
   */
  readonly allowCommandLinker = false;

  /**
   * Replies never carry `name` or `id` attributes.
   */
  readonly allowNamedProperties = false;

  /**
   * Whether plain URLs become links, as the app's sanitizer says.
   */
  getAutolink(): boolean {
    return this._base.getAutolink?.() ?? true;
  }

  /**
   * Sanitize a reply's HTML.
   */
  sanitize(dirty: string, options?: IRenderMime.ISanitizerOptions): string {
    const clean = this._base.sanitize(dirty, options);
    const doc = new DOMParser().parseFromString(
      `<!doctype html><body>${clean}</body>`,
      'text/html'
    );
    Private.scrub(doc.body);
    return doc.body.innerHTML;
  }

  private _base: IRenderMime.ISanitizer;
}

/**
 * The functions of this module.
 */
export namespace ReplySanitizer {
  /**
   * A copy of `rendermime` whose untrusted HTML goes through a
   * {@link ReplySanitizer}; made once per registry.
   */
  export function registry(
    rendermime: IRenderMimeRegistry
  ): IRenderMimeRegistry {
    let clone = Private.clones.get(rendermime);
    if (!clone) {
      clone = rendermime.clone({
        sanitizer: new ReplySanitizer(rendermime.sanitizer)
      });
      Private.clones.set(rendermime, clone);
    }
    return clone;
  }
}

namespace Private {
  export const clones = new WeakMap<IRenderMimeRegistry, IRenderMimeRegistry>();

  /** Media that would load from its URL: shown as a link instead. */
  const MEDIA = new Set([
    'IMG',
    'VIDEO',
    'AUDIO',
    'PICTURE',
    'SOURCE',
    'TRACK',
    'IMAGE'
  ]);
  /** Elements dropped with what they hold. */
  const DROPPED = new Set([
    'IFRAME',
    'FRAME',
    'FRAMESET',
    'OBJECT',
    'EMBED',
    'APPLET',
    'LINK',
    'META',
    'BASE',
    'STYLE',
    'SCRIPT',
    'TEMPLATE',
    'PORTAL'
  ]);
  /** Controls replaced by their text. */
  const CONTROLS = new Set([
    'FORM',
    'BUTTON',
    'INPUT',
    'SELECT',
    'OPTION',
    'TEXTAREA',
    'LABEL',
    'FIELDSET',
    'DIALOG'
  ]);
  /** Attributes that can act or fetch. */
  const URL_ATTRIBUTES = new Set([
    'src',
    'srcset',
    'poster',
    'background',
    'action',
    'formaction',
    'xlink:href',
    'ping',
    'lowsrc',
    'dynsrc',
    'data'
  ]);

  /**
   * Remove from `root` whatever could act or fetch without a click.
   */
  export function scrub(root: HTMLElement): void {
    for (const el of Array.from(root.querySelectorAll('*'))) {
      if (!el.isConnected) {
        continue;
      }
      const tag = el.tagName.toUpperCase();
      if (DROPPED.has(tag)) {
        el.remove();
        continue;
      }
      if (MEDIA.has(tag)) {
        el.replaceWith(mediaLink(el));
        continue;
      }
      if (CONTROLS.has(tag)) {
        el.replaceWith(el.ownerDocument.createTextNode(el.textContent ?? ''));
        continue;
      }
      for (const attr of Array.from(el.attributes)) {
        const name = attr.name.toLowerCase();
        if (
          name.startsWith('data-commandlinker') ||
          name.startsWith('on') ||
          name === 'style' ||
          name === 'id' ||
          name === 'name' ||
          URL_ATTRIBUTES.has(name)
        ) {
          el.removeAttribute(attr.name);
        }
      }
      if (tag === 'A') {
        const href = el.getAttribute('href') ?? '';
        if (!/^(https?:|mailto:|#)/i.test(href.trim())) {
          el.removeAttribute('href');
        } else {
          el.setAttribute('rel', 'noopener noreferrer nofollow');
          el.setAttribute('target', '_blank');
        }
      }
    }
  }

  /**
   * A plain link to a medium's web address (nothing loads until it is
   * clicked), or its alternative text when it has no such address.
   */
  function mediaLink(el: Element): Node {
    const doc = el.ownerDocument;
    const src = (el.getAttribute('src') ?? '').trim();
    const label =
      el.getAttribute('alt') || el.getAttribute('title') || src || 'media';
    if (!/^https?:/i.test(src)) {
      return doc.createTextNode(label === src ? '' : `[${label}]`);
    }
    const a = doc.createElement('a');
    a.setAttribute('href', src);
    a.setAttribute('rel', 'noopener noreferrer nofollow');
    a.setAttribute('target', '_blank');
    a.textContent = `[${label}]`;
    return a;
  }
}
