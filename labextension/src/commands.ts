// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import type { TranslationBundle } from '@jupyterlab/translation';

import type { ContextModel } from './contextmodel';
import { copilotIcon } from './icons';
import { CopilotPanel } from './panel';
import { pollUntil } from './polling';
import type { ReviewManager } from './review/manager';

/**
 * The command ids of the extension.
 */
export namespace CommandIDs {
  /** Show the Copilot panel and attach the single selected cell. */
  export const attachCell = 'jupyter-copilot:attach-cell';

  /**
   * Archive the current conversation and start a new one; `{prefill?}` is
   * put in the composer, never sent.
   */
  export const newConversation = 'jupyter-copilot:new-conversation';

  /** Select a cell and attach it to the current conversation. */
  export const askAboutCell = 'jupyter-copilot:ask-about-cell';

  /** Press Keep on the current review (docs/protocol.md section 6). */
  export const keepReview = 'jupyter-copilot:keep-review';

  /** Press Undo (Dismiss after a conflict) on the current review. */
  export const undoReview = 'jupyter-copilot:undo-review';

  /** Move to the next open review of the current notebook. */
  export const nextReview = 'jupyter-copilot:next-review';

  /**
   * Attach a cell and its error to a new message asking for a fix;
   * `{path?, cellId?}` names the cell.
   */
  export const fixError = 'jupyter-copilot:fix-error';

  /** The same, asking for an explanation. */
  export const explainError = 'jupyter-copilot:explain-error';
}

/**
 * Add the commands that decide reviews from the keyboard, and their palette
 * entries; their default shortcuts are in the settings schema.
 *
 * @param app - The application.
 * @param reviews - The page's reviews.
 * @param palette - The command palette, when there is one.
 * @param trans - The words of the commands, in the person's language.
 */
export function addReviewCommands(
  app: JupyterFrontEnd,
  reviews: ReviewManager,
  palette: ICommandPalette | null,
  trans: TranslationBundle
): void {
  const category = trans.__('Copilot');
  app.commands.addCommand(CommandIDs.keepReview, {
    label: trans.__('Keep the Copilot Proposal'),
    caption: trans.__(
      'Apply the proposal under review in the active cell, after the server allows it.'
    ),
    isEnabled: () => reviews.current()?.view.state === 'open',
    execute: () => reviews.current()?.view.requestKeep() ?? false
  });
  app.commands.addCommand(CommandIDs.undoReview, {
    label: trans.__('Undo the Copilot Proposal'),
    caption: trans.__(
      'Discard the proposal under review in the active cell; the notebook stays as it is.'
    ),
    isEnabled: () => {
      const state = reviews.current()?.view.state;
      return !!state && state !== 'keeping';
    },
    execute: () => reviews.current()?.view.requestUndo() ?? false
  });
  app.commands.addCommand(CommandIDs.nextReview, {
    label: trans.__('Go to the Next Copilot Proposal'),
    caption: trans.__(
      'Move to the next cell of this notebook with a proposal under review.'
    ),
    execute: () => !!reviews.next()
  });
  for (const command of [
    CommandIDs.keepReview,
    CommandIDs.undoReview,
    CommandIDs.nextReview
  ]) {
    palette?.addItem({ command, category });
  }
}

/**
 * Add the commands, their palette entries and cell context menu items.
 *
 * @param app - The application.
 * @param panel - The Copilot panel of this page.
 * @param notebooks - The open notebooks, for the cell to ask about.
 * @param palette - The command palette, when there is one.
 * @param trans - The words of the commands, in the person's language.
 */
export function addCommands(
  app: JupyterFrontEnd,
  panel: CopilotPanel,
  notebooks: INotebookTracker,
  palette: ICommandPalette | null,
  trans: TranslationBundle
): void {
  const category = trans.__('Copilot');
  app.commands.addCommand(CommandIDs.attachCell, {
    label: trans.__('Attach Cell to Copilot'),
    caption: trans.__(
      'Show the Copilot panel and attach the selected cell, so that the conversation may read it and propose an edit to it.'
    ),
    icon: copilotIcon,
    execute: async () => {
      // Activating never clears the panel; a refresh brings the selection.
      app.shell.activateById(panel.id);
      const parts = await panel.parts();
      if (!parts) {
        return false;
      }
      await parts.context.refresh();
      return parts.context.attach();
    }
  });
  app.commands.addCommand(CommandIDs.newConversation, {
    label: trans.__('New Copilot Conversation'),
    caption: trans.__(
      'Archive the current conversation (it stays under Earlier conversations) and start a new one.'
    ),
    icon: copilotIcon,
    execute: async args => {
      app.shell.activateById(panel.id);
      const chat = await panel.chat();
      const prefill =
        typeof args?.prefill === 'string' ? args.prefill : undefined;
      return chat ? chat.newConversation(prefill) : false;
    }
  });
  app.commands.addCommand(CommandIDs.askAboutCell, {
    label: trans.__('Ask Copilot About This Cell'),
    caption: trans.__(
      'Select this cell and attach it to the current Copilot conversation.'
    ),
    icon: copilotIcon,
    execute: async () => {
      const target = Private.targetCell(app, notebooks);
      if (target) {
        Private.select(app, target);
      }
      app.shell.activateById(panel.id);
      const chat = await panel.chat();
      const context = (await panel.parts())?.context;
      const selected =
        !!context &&
        !!target &&
        (await Private.untilSelected(context, target.cellId));
      const attached = selected && !!context?.attach();
      chat?.showCurrent();
      return attached;
    }
  });
  palette?.addItem({ command: CommandIDs.attachCell, category });
  palette?.addItem({ command: CommandIDs.askAboutCell, category });
  palette?.addItem({ command: CommandIDs.newConversation, category });
  app.contextMenu.addItem({
    command: CommandIDs.askAboutCell,
    selector: '.jp-Notebook .jp-Cell',
    rank: 99
  });
  app.contextMenu.addItem({
    command: CommandIDs.attachCell,
    selector: '.jp-Notebook .jp-Cell',
    rank: 100
  });
}

namespace Private {
  /**
   * How long a newly selected cell may take to reach the context, in ms.
   */
  const SELECT_TIMEOUT = 3000;

  /**
   * A cell of a notebook.
   */
  export interface ITarget {
    panel: NotebookPanel;
    index: number;
    cellId: string;
  }

  /**
   * The cell the context menu was opened on, or else the active cell of
   * the current notebook.
   */
  export function targetCell(
    app: JupyterFrontEnd,
    notebooks: INotebookTracker
  ): ITarget | null {
    const hit = app.contextMenuHitTest(node =>
      node.classList.contains('jp-Cell')
    );
    if (hit) {
      const panel = notebooks.find(p =>
        p.content.widgets.some(c => c.node === hit)
      );
      const index = panel?.content.widgets.findIndex(c => c.node === hit) ?? -1;
      if (panel && index >= 0) {
        return { panel, index, cellId: panel.content.widgets[index].model.id };
      }
    }
    const panel = notebooks.currentWidget;
    const cell = panel?.content.activeCell;
    if (!panel || !cell) {
      return null;
    }
    return {
      panel,
      index: panel.content.activeCellIndex,
      cellId: cell.model.id
    };
  }

  /**
   * Make a cell the only selected one of its notebook.
   */
  export function select(app: JupyterFrontEnd, target: ITarget): void {
    if (app.shell.currentWidget !== target.panel) {
      app.shell.activateById(target.panel.id);
    }
    const notebook = target.panel.content;
    notebook.activeCellIndex = target.index;
    notebook.deselectAll();
  }

  /**
   * Refresh the context until it shows a cell as the selected one.
   *
   * @returns Whether it did before the timeout.
   */
  export async function untilSelected(
    model: ContextModel,
    cellId: string
  ): Promise<boolean> {
    const deadline = Date.now() + SELECT_TIMEOUT;
    return pollUntil(
      async () => {
        await model.refresh();
        if (model.context?.cell?.cellId === cellId) {
          return true;
        }
        if (Date.now() > deadline || model.isDisposed) {
          return false;
        }
        return undefined;
      },
      { interval: 100 }
    );
  }
}
