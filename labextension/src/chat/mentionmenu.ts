// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';
import type { IDisposable } from '@lumino/disposable';

import type { ContextModel } from '../contextmodel';
import { element } from '../dom';
import {
  IMentionQuery,
  matchMentions,
  MentionKind,
  mentionAt,
  removeMention
} from './mentions';
import type { IMentionOffer, MentionSource } from './mentionsource';

/**
 * The menu `@` opens in the composer, `.jp-Copilot-MentionMenu`
 * (`role="listbox"`), with one `.jp-Copilot-MentionItem` per offer
 * (`data-kind`: `cell`, `variable` or `file`). Up and Down move, Enter and
 * Tab pick, Escape closes; picking adds the offer's chip and takes the typed
 * `@query` out of the text.
 */
export class MentionMenu implements IDisposable {
  /**
   * Create the menu of a composer's text area.
   */
  constructor(options: MentionMenu.IOptions) {
    this._input = options.input;
    this._source = options.source;
    this._kinds = options.kinds;
    this._onPick = options.onPick;
    this._trans = options.trans;
    this.node = element('div', 'jp-Copilot-MentionMenu');
    this.node.id = `jp-Copilot-MentionMenu-${Private.ids.next++}`;
    this.node.setAttribute('role', 'listbox');
    this.node.setAttribute('aria-label', this._trans.__('Attach with @'));
    this.node.hidden = true;
    // Picking with the mouse must not take the focus from the text area.
    this.node.addEventListener('mousedown', this._onMouseDown);
    this._input.setAttribute('aria-autocomplete', 'list');
    this._input.setAttribute('aria-controls', this.node.id);
    this._input.setAttribute('aria-expanded', 'false');
    this._input.addEventListener('input', this._update);
    this._input.addEventListener('click', this._update);
    this._input.addEventListener('blur', this._onBlur);
  }

  /** The menu's node; the composer places it. */
  readonly node: HTMLElement;

  /** Whether the menu is open. */
  get isOpen(): boolean {
    return !this.node.hidden;
  }

  /** Whether the menu is disposed. */
  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Handle a key of the text area while the menu is open.
   *
   * @returns Whether the menu used the key (the composer then ignores it).
   */
  handleKey(event: KeyboardEvent): boolean {
    if (!this.isOpen || event.isComposing) {
      return false;
    }
    const count = this._shown.length;
    switch (event.key) {
      case 'ArrowDown':
      case 'ArrowUp':
        if (count > 0) {
          const step = event.key === 'ArrowDown' ? 1 : count - 1;
          this._active = (this._active + step) % count;
          this._renderActive();
        }
        break;
      case 'Enter':
      case 'Tab':
        if (event.shiftKey || (count === 0 && this._offers !== null)) {
          return false;
        }
        // While the offers load, Enter waits rather than send a half mention.
        if (count > 0) {
          this._pick(this._shown[this._active]);
        }
        break;
      case 'Escape':
        this._dismissed = this._query?.start ?? null;
        this._close();
        break;
      default:
        return false;
    }
    event.preventDefault();
    event.stopPropagation();
    return true;
  }

  /**
   * Close the menu and stop listening.
   */
  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._input.removeEventListener('input', this._update);
    this._input.removeEventListener('click', this._update);
    this._input.removeEventListener('blur', this._onBlur);
    this.node.remove();
  }

  /**
   * Follow the text: open on an `@query` at the caret, close without one.
   */
  private _update = (): void => {
    const input = this._input;
    const query =
      this._source && input.selectionStart === input.selectionEnd
        ? mentionAt(input.value, input.selectionStart ?? 0)
        : null;
    if (!query || query.start === this._dismissed) {
      if (!query) {
        this._dismissed = null;
      }
      this._close();
      return;
    }
    const kinds = this._kinds();
    const key = [...kinds].sort().join(',');
    if (this._query?.start !== query.start || this._offersKey !== key) {
      // A new `@`: ask once for what it may name, then filter as one types.
      this._offersKey = key;
      this._offers = null;
      const asked = ++this._asked;
      void this._source?.offers(kinds).then(offers => {
        if (asked === this._asked && !this._isDisposed) {
          this._offers = offers;
          this._render();
        }
      });
    }
    this._query = query;
    this._active = 0;
    this._render();
  };

  private _onBlur = (): void => {
    this._close();
  };

  private _onMouseDown = (event: MouseEvent): void => {
    event.preventDefault();
    const item = (event.target as HTMLElement).closest<HTMLElement>(
      '.jp-Copilot-MentionItem'
    );
    const index = item ? Number(item.dataset.index) : NaN;
    if (Number.isInteger(index) && this._shown[index]) {
      this._pick(this._shown[index]);
    }
  };

  private _pick(offer: IMentionOffer): void {
    const query = this._query;
    if (!query) {
      return;
    }
    const input = this._input;
    const caret = query.start + 1 + query.query.length;
    const next = removeMention(input.value, query, caret);
    input.value = next.text;
    input.setSelectionRange(next.caret, next.caret);
    this._onPick(offer.reference);
    this._close();
    // The composer's buttons follow the text.
    input.dispatchEvent(new Event('input'));
  }

  private _close(): void {
    this._query = null;
    this._asked++;
    this._offersKey = '';
    this._shown = [];
    this.node.hidden = true;
    this._input.setAttribute('aria-expanded', 'false');
    this._input.removeAttribute('aria-activedescendant');
  }

  private _render(): void {
    const query = this._query;
    if (!query) {
      return;
    }
    const items: HTMLElement[] = [];
    const offers = this._offers;
    if (offers === null) {
      items.push(
        element('div', 'jp-Copilot-MentionNote', this._trans.__('Loading…'))
      );
      this._shown = [];
    } else {
      this._shown = matchMentions(
        offers.offers,
        query.query
      ) as IMentionOffer[];
      this._active = Math.min(
        this._active,
        Math.max(this._shown.length - 1, 0)
      );
      this._shown.forEach((offer, index) => {
        const item = element('div', 'jp-Copilot-MentionItem');
        item.id = `${this.node.id}-${index}`;
        item.setAttribute('role', 'option');
        item.dataset.kind = offer.kind;
        item.dataset.index = String(index);
        item.append(
          element(
            'span',
            'jp-Copilot-MentionKind',
            Private.kindLabel(offer.kind, this._trans)
          ),
          element('span', 'jp-Copilot-MentionLabel', offer.label),
          element('span', 'jp-Copilot-MentionDetail', offer.detail)
        );
        items.push(item);
      });
      if (this._shown.length === 0) {
        items.push(
          element(
            'div',
            'jp-Copilot-MentionNote',
            this._trans.__('Nothing matches @%1', query.query)
          )
        );
      }
      for (const note of offers.notes) {
        items.push(element('div', 'jp-Copilot-MentionNote', note));
      }
      const hint = Private.grantHint(this._kinds(), this._trans);
      if (hint) {
        items.push(
          element('div', 'jp-Copilot-MentionNote jp-Copilot-MentionHint', hint)
        );
      }
    }
    this.node.replaceChildren(...items);
    this.node.hidden = false;
    this._input.setAttribute('aria-expanded', 'true');
    this._renderActive();
  }

  private _renderActive(): void {
    const items = this.node.querySelectorAll<HTMLElement>(
      '.jp-Copilot-MentionItem'
    );
    items.forEach((item, index) => {
      const active = index === this._active;
      item.setAttribute('aria-selected', String(active));
      item.classList.toggle('jp-mod-active', active);
      if (active) {
        this._input.setAttribute('aria-activedescendant', item.id);
        item.scrollIntoView?.({ block: 'nearest' });
      }
    });
    if (items.length === 0) {
      this._input.removeAttribute('aria-activedescendant');
    }
  }

  private _input: HTMLTextAreaElement;
  private _source: MentionSource | null;
  private _kinds: () => ReadonlySet<MentionKind>;
  private _onPick: (reference: ContextModel.IReference) => void;
  private _trans: TranslationBundle;
  private _query: IMentionQuery | null = null;
  private _offers: MentionSource.IOffers | null = null;
  private _offersKey = '';
  private _shown: IMentionOffer[] = [];
  private _active = 0;
  private _asked = 0;
  /** The `@` the person closed with Escape; it stays closed until it goes. */
  private _dismissed: number | null = null;
  private _isDisposed = false;
}

/**
 * The types of the mention menu.
 */
export namespace MentionMenu {
  /**
   * The options of a mention menu.
   */
  export interface IOptions {
    /** The composer's text area. */
    input: HTMLTextAreaElement;
    /** What `@` may name; none: the menu never opens. */
    source: MentionSource | null;
    /** The kinds the conversation's grants allow now. */
    kinds: () => ReadonlySet<MentionKind>;
    /** Add the chip of a picked offer. */
    onPick: (reference: ContextModel.IReference) => void;
    /** The words of the menu, in the person's language. */
    trans: TranslationBundle;
  }
}

namespace Private {
  /** Makes the ids of menus unique on the page. */
  export const ids = { next: 0 };

  /**
   * What to check under Context for `@` to offer more; "" when nothing.
   */
  export function grantHint(
    kinds: ReadonlySet<MentionKind>,
    trans: TranslationBundle
  ): string {
    const variables = kinds.has('variable');
    const files = kinds.has('file');
    if (variables && files) {
      return '';
    }
    if (files) {
      return trans.__(
        'Check Kernel variables under Context to attach variables too.'
      );
    }
    if (variables) {
      return trans.__('Check Files under Context to attach files too.');
    }
    return trans.__(
      'Check Kernel variables or Files under Context to attach them too.'
    );
  }

  /**
   * The short kind shown before an offer's label.
   */
  export function kindLabel(
    kind: MentionKind,
    trans: TranslationBundle
  ): string {
    switch (kind) {
      case 'variable':
        return trans.__('Variable');
      case 'file':
        return trans.__('File');
      default:
        return trans.__('Cell');
    }
  }
}
