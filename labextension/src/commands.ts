// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';

import { copilotIcon } from './icons';
import { CopilotPanel } from './panel';

/**
 * The command ids of the extension.
 */
export namespace CommandIDs {
  /** Show the Copilot panel and attach the single selected cell. */
  export const attachCell = 'jupyter-copilot:attach-cell';
}

/**
 * Add the commands, their palette entries and cell context menu items.
 *
 * @param app - The application.
 * @param panel - The Copilot panel of this page.
 * @param palette - The command palette, when there is one.
 */
export function addCommands(
  app: JupyterFrontEnd,
  panel: CopilotPanel,
  palette: ICommandPalette | null
): void {
  app.commands.addCommand(CommandIDs.attachCell, {
    label: 'Attach Cell to Copilot',
    caption:
      'Show the Copilot panel and attach the selected cell, so that the conversation may read it and propose an edit to it.',
    icon: copilotIcon,
    execute: async () => {
      // Activating never clears the panel; a refresh brings the selection.
      app.shell.activateById(panel.id);
      await panel.model.refresh();
      return panel.model.attach();
    }
  });
  palette?.addItem({ command: CommandIDs.attachCell, category: 'Copilot' });
  app.contextMenu.addItem({
    command: CommandIDs.attachCell,
    selector: '.jp-Notebook .jp-Cell',
    rank: 100
  });
}
