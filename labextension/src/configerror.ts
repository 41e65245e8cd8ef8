// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';
import { SidePanel } from '@jupyterlab/ui-components';
import { Panel, Widget } from '@lumino/widgets';

import type { IStatus } from './api';
import { copilotIcon } from './icons';
import { CopilotPanel } from './panel';

/**
 * The side panel shown instead of the Copilot panel when the server's
 * jupyter-copilot settings are invalid: the server then turns agents and
 * tools off (docs/admin.md, "Invalid settings"), and this says so and which
 * settings an administrator must fix. It holds nothing else.
 */
export class ConfigErrorPanel extends SidePanel {
  /**
   * Create the panel for the settings `names`.
   */
  constructor(options: ConfigErrorPanel.IOptions) {
    super({ content: new Panel() });
    const trans = options.trans;
    this.id = CopilotPanel.ID;
    this.addClass('jp-Copilot-Panel');
    this.title.icon = copilotIcon;
    this.title.caption = trans.__('Copilot');

    const header = new Widget();
    header.addClass('jp-Copilot-Header');
    header.node.textContent = trans.__('Copilot');
    this.header.addWidget(header);

    const message = new Widget();
    message.addClass('jp-Copilot-ConfigError');
    message.node.setAttribute('role', 'alert');
    message.node.textContent = ConfigErrorPanel.message(options.names, trans);
    this.addWidget(message);
  }
}

/**
 * The types and functions of the panel.
 */
export namespace ConfigErrorPanel {
  /**
   * The options of the panel.
   */
  export interface IOptions {
    /** The names of the invalid settings, as the status lists them. */
    names: string[];
    /** The words of the panel, in the person's language. */
    trans: TranslationBundle;
  }

  /**
   * The names of the invalid settings in a status reply (`configErrors`);
   * empty when it has none or is not a status at all.
   */
  export function names(status: IStatus | undefined): string[] {
    const listed: unknown = status?.configErrors;
    return Array.isArray(listed)
      ? listed.filter((n): n is string => typeof n === 'string' && n !== '')
      : [];
  }

  /**
   * What the panel says.
   */
  export function message(names: string[], trans: TranslationBundle): string {
    return trans.__(
      "This server's jupyter-copilot settings are invalid (%1): an administrator must fix them; agents and tools are off.",
      names.join(', ')
    );
  }
}
