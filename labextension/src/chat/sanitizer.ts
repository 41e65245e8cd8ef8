// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';

/**
 * The sanitizer of agent replies: JupyterLab's own, then stricter.
 *
 * An agent's reply is data (a prompt-injected agent writes whatever it is
 * told to), so after the app's sanitizer this one makes it inert: plain
 * elements only. No attribute survives but a few that neither act nor
 * style (a link's web address, a table cell's span, a list's start...): no
 * `class`, `id` or `style`, so a reply cannot dress up as an approval card
 * or a JupyterLab dialog, nor cover the page; only a code block keeps its
 * `language-*` class. Command links, event handlers, forms, buttons and
 * inputs go (a task list's checkbox becomes a plain mark); images and media
 * become plain links that load nothing until clicked; frames, objects,
 * embeds, SVG and MathML drawings are dropped or reduced to their text. The
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
   * {@link ReplySanitizer}, and whose math is left as its TeX source;
   * made once per registry.
   *
   * JupyterLab's typesetter (MathJax with every TeX package) would run on
   * the sanitized reply and honour `\style`, `\class` and `\href`,
   * drawing whatever an agent asks for over the page.
   */
  export function registry(
    rendermime: IRenderMimeRegistry
  ): IRenderMimeRegistry {
    let clone = Private.clones.get(rendermime);
    if (!clone) {
      clone = rendermime.clone({
        sanitizer: new ReplySanitizer(rendermime.sanitizer),
        latexTypesetter: Private.NO_TYPESETTING
      });
      Private.clones.set(rendermime, clone);
    }
    return clone;
  }
}

namespace Private {
  export const clones = new WeakMap<IRenderMimeRegistry, IRenderMimeRegistry>();

  /** A typesetter that leaves math as it is written. */
  export const NO_TYPESETTING: IRenderMime.ILatexTypesetter = {
    typeset: () => undefined
  };

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
    'NOSCRIPT',
    'TEMPLATE',
    'PORTAL'
  ]);
  /**
   * Controls and drawings replaced by their text: nothing in a reply can be
   * pressed, filled in or drawn to look like something else.
   */
  const AS_TEXT = new Set([
    'FORM',
    'BUTTON',
    'INPUT',
    'SELECT',
    'OPTION',
    'OPTGROUP',
    'DATALIST',
    'OUTPUT',
    'TEXTAREA',
    'LABEL',
    'FIELDSET',
    'DIALOG',
    'METER',
    'PROGRESS',
    'SVG',
    'MATH'
  ]);
  /** The only attributes kept, on any element or on the one named. */
  const KEPT: Record<string, Set<string>> = {
    '*': new Set(['title', 'lang', 'dir']),
    A: new Set(['href']),
    CODE: new Set(['class']),
    TD: new Set(['align', 'colspan', 'rowspan']),
    TH: new Set(['align', 'colspan', 'rowspan', 'scope']),
    OL: new Set(['start', 'reversed', 'type']),
    LI: new Set(['value']),
    DETAILS: new Set(['open']),
    TIME: new Set(['datetime'])
  };
  /** The class of a code block that names its language. */
  const LANGUAGE_CLASS = /^language-[\w+#.-]{1,40}$/;

  /**
   * Make `root` inert: only plain elements with harmless attributes stay.
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
      if (AS_TEXT.has(tag)) {
        el.replaceWith(el.ownerDocument.createTextNode(asText(el, tag)));
        continue;
      }
      const kept = KEPT[tag];
      for (const attr of Array.from(el.attributes)) {
        const name = attr.name.toLowerCase();
        if (!KEPT['*'].has(name) && !kept?.has(name)) {
          el.removeAttribute(attr.name);
        }
      }
      if (tag === 'CODE') {
        const language = Array.from(el.classList).filter(c =>
          LANGUAGE_CLASS.test(c)
        );
        el.removeAttribute('class');
        if (language.length === 1) {
          el.setAttribute('class', language[0]);
        }
        // Code is text: the highlighter's spans (now without their classes)
        // go with anything else inside, and chat/highlight.ts colours it again.
        el.textContent = el.textContent ?? '';
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
   * What stands for a control or a drawing: a task list's checkbox is a
   * plain mark, anything else its text.
   */
  function asText(el: Element, tag: string): string {
    if (
      tag === 'INPUT' &&
      el.getAttribute('type')?.toLowerCase() === 'checkbox'
    ) {
      return el.hasAttribute('checked') ? '\u2611' : '\u2610';
    }
    return el.textContent ?? '';
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
