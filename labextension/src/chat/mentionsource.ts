// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { Contents } from '@jupyterlab/services';
import type { INotebookTracker } from '@jupyterlab/notebook';
import type { TranslationBundle } from '@jupyterlab/translation';

import type { CopilotApi, IVariableInfo } from '../api';
import type { ContextModel } from '../contextmodel';
import { sourceHash } from '../hash';
import type { IMention, MentionKind } from './mentions';

/**
 * One thing `@` offers, with the chip it adds.
 */
export interface IMentionOffer extends IMention {
  reference: ContextModel.IReference;
}

/**
 * What `@` can offer now: the cells of the active notebook, the files of
 * its folder, the variables of its kernel. It offers only the kinds it is
 * asked for; the composer asks for files and variables only when the
 * conversation grants them (docs/conversations.md, "Context chips").
 */
export class MentionSource {
  /**
   * Create a source for one page.
   */
  constructor(options: MentionSource.IOptions) {
    this._notebooks = options.notebooks;
    this._context = options.context;
    this._api = options.api;
    this._contents = options.contents;
    this._trans = options.trans;
  }

  /**
   * What `@` offers of the given kinds, cells first, then variables, then
   * files; a kind that cannot be read now is left out and `notes` says why.
   */
  async offers(
    kinds: ReadonlySet<MentionKind>
  ): Promise<MentionSource.IOffers> {
    const notes: string[] = [];
    const [variables, files] = await Promise.all([
      kinds.has('variable') ? this._variables(notes) : [],
      kinds.has('file') ? this._files(notes) : []
    ]);
    return {
      offers: [
        ...(kinds.has('cell') ? this._cells() : []),
        ...variables,
        ...files
      ],
      notes
    };
  }

  private _cells(): IMentionOffer[] {
    const panel = this._notebooks.currentWidget;
    const artifactId = this._context.context?.viewState?.artifactId;
    if (!panel || !artifactId) {
      return [];
    }
    const offers: IMentionOffer[] = [];
    panel.content.widgets.forEach((cell, index) => {
      const source = cell.model.sharedModel.getSource();
      const hash = sourceHash(source);
      if (hash === null) {
        return;
      }
      const label = this._trans.__('Cell %1', index + 1);
      const first = source.split('\n').find(line => line.trim() !== '') ?? '';
      offers.push({
        kind: 'cell',
        key: `${label} ${first.trim()}`,
        label,
        detail: first.trim().slice(0, 60),
        reference: {
          kind: 'cell',
          label,
          artifactId,
          cellId: cell.model.id,
          expectedSourceHash: hash
        }
      });
    });
    return offers;
  }

  private async _variables(notes: string[]): Promise<IMentionOffer[]> {
    const reply = await this._api.variables();
    if (reply.error) {
      notes.push(this._trans.__('Kernel variables: %1', reply.error.message));
      return [];
    }
    return reply.result.map((v: IVariableInfo) => ({
      kind: 'variable' as const,
      key: v.name,
      label: v.name,
      detail: Private.describe(v),
      reference: { kind: 'variable' as const, label: v.name, name: v.name }
    }));
  }

  private async _files(notes: string[]): Promise<IMentionOffer[]> {
    const path = this._notebooks.currentWidget?.context.path ?? '';
    const folder = path.includes('/')
      ? path.slice(0, path.lastIndexOf('/'))
      : '';
    let listing: Contents.IModel;
    try {
      listing = await this._contents.get(folder, { content: true });
    } catch {
      notes.push(this._trans.__('Files: the folder could not be listed.'));
      return [];
    }
    const items = Array.isArray(listing.content)
      ? (listing.content as Contents.IModel[])
      : [];
    // Notebooks are never read as files (docs/protocol.md section 11).
    return items
      .filter(item => item.type === 'file')
      .map(item => ({
        kind: 'file' as const,
        key: item.path,
        label: item.name,
        detail: folder || '/',
        reference: { kind: 'file' as const, label: item.name, path: item.path }
      }));
  }

  private _notebooks: INotebookTracker;
  private _context: ContextModel;
  private _api: CopilotApi;
  private _contents: Contents.IManager;
  private _trans: TranslationBundle;
}

/**
 * The types of the mention source.
 */
export namespace MentionSource {
  /**
   * The options of a mention source.
   */
  export interface IOptions {
    /** The open notebooks; the current one's cells and folder are offered. */
    notebooks: INotebookTracker;
    /** The context, for the active notebook's artifactId. */
    context: ContextModel;
    /** The client of the server's API, for the variables. */
    api: CopilotApi;
    /** The server's files, for the notebook's folder. */
    contents: Contents.IManager;
    /** The words of the menu, in the person's language. */
    trans: TranslationBundle;
  }

  /**
   * What `@` offers, and why a kind asked for has nothing to offer.
   */
  export interface IOffers {
    offers: IMentionOffer[];
    notes: string[];
  }
}

namespace Private {
  /**
   * A variable's type with its shape or length: "DataFrame 3×2".
   */
  export function describe(v: IVariableInfo): string {
    const type = v.type.split('.').pop() ?? v.type;
    if (Array.isArray(v.shape)) {
      return `${type} ${v.shape.join('×')}`;
    }
    return typeof v.length === 'number' ? `${type} (${v.length})` : type;
  }
}
