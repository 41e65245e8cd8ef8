// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import { PageConfig } from '@jupyterlab/coreutils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ServerConnection } from '@jupyterlab/services';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import { UUID } from '@lumino/coreutils';

import { Actions, CopilotApi } from './api';
import { Bridge } from './bridge';
import { addErrorCommands, ErrorActions } from './erroractions';
import { hasEndedReviews } from './changes/reloaded';
import { addCommands } from './commands';
import { BridgeHandle, ReviewsHandle } from './handles';
import { liveCellReader } from './livecells';
import { readLiveContext } from './livestate';
import { compileMatcher, matchesPage, pagePath } from './matcher';
import { CopilotPanel } from './panel';
import type { IPanelParts } from './parts';
import { Preferences } from './preferences';
import { readCells } from './readcells';
import type { CellRunner } from './run/runner';
import { ContextSnapshot } from './snapshot';
import { PageStateTracker } from './state';
import { ICopilotBridge, ICopilotReviews } from './tokens';

export { ICopilotBridge, ICopilotReviews } from './tokens';

/**
 * The jupyter-copilot page plugin: with the feature switch on, it opens the
 * page bridge, reports the live page state and adds the Copilot side panel.
 * With the switch off, or without the server extension, it does nothing.
 * It provides {@link ICopilotBridge} at once; the bridge attaches to it later.
 */
const plugin: JupyterFrontEndPlugin<ICopilotBridge> = {
  id: 'jupyterlab-agent-review:plugin',
  description: 'The Copilot side panel and the page bridge of jupyter-copilot.',
  autoStart: true,
  provides: ICopilotBridge,
  requires: [INotebookTracker],
  optional: [
    ILayoutRestorer,
    ICommandPalette,
    IEditorLanguageRegistry,
    IRenderMimeRegistry,
    ISettingRegistry,
    ITranslator
  ],
  activate: (
    app: JupyterFrontEnd,
    notebooks: INotebookTracker,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null,
    languages: IEditorLanguageRegistry | null,
    rendermime: IRenderMimeRegistry | null,
    settings: ISettingRegistry | null,
    translator: ITranslator | null
  ): ICopilotBridge => {
    const trans = (translator ?? nullTranslator).load('jupyter_copilot');
    const preferences = new Preferences();
    // Never hold up the application start on the server round trip, nor on
    // the settings: until they load, the schema's defaults apply.
    settings
      ?.load(plugin.id)
      .then(s => preferences.connect(s))
      .catch(() => undefined);
    void Private.start({
      app,
      notebooks,
      restorer,
      palette,
      languages,
      rendermime,
      trans,
      translator: translator ?? undefined,
      preferences
    }).finally(() => Private.handles.bridge.absent());
    return Private.handles.bridge;
  }
};

/**
 * The reviews of this page for other extensions ({@link ICopilotReviews}),
 * read from the review manager the page plugin makes.
 */
const reviewsPlugin: JupyterFrontEndPlugin<ICopilotReviews> = {
  id: 'jupyterlab-agent-review:reviews',
  description:
    "The reviews that agents' proposals opened, for other extensions.",
  autoStart: true,
  provides: ICopilotReviews,
  requires: [ICopilotBridge],
  activate: (): ICopilotReviews => Private.handles.reviews
};

export default [plugin, reviewsPlugin];

namespace Private {
  /**
   * The public faces of this page's bridge and reviews, one per page.
   */
  export const handles = {
    bridge: new BridgeHandle(),
    reviews: new ReviewsHandle()
  };

  /**
   * What the plugin hands {@link start}.
   */
  export interface IStartOptions {
    app: JupyterFrontEnd;
    notebooks: INotebookTracker;
    /** Keeps the panel open across reloads when the person left it open. */
    restorer: ILayoutRestorer | null;
    palette: ICommandPalette | null;
    languages: IEditorLanguageRegistry | null;
    rendermime: IRenderMimeRegistry | null;
    /** The words of the panel, in the person's language. */
    trans: TranslationBundle;
    /** JupyterLab's translator, for the actions of its own that we run. */
    translator?: ITranslator;
    /** The person's preferences, live from the settings registry. */
    preferences: Preferences;
  }

  /**
   * Show the panel that names the server's invalid settings, when it has any.
   * Its code loads only then, off the start bundle.
   */
  async function showConfigErrors(
    app: JupyterFrontEnd,
    api: CopilotApi,
    trans: TranslationBundle
  ): Promise<void> {
    const status = (await api.status()).result;
    const { ConfigErrorPanel } = await import('./configerror');
    const names = ConfigErrorPanel.names(status);
    if (names.length === 0) {
      return;
    }
    const panel = new ConfigErrorPanel({ names, trans });
    app.shell.add(panel, 'right', { rank: 600 });
    await app.restored;
    app.shell.activateById(panel.id);
  }

  /**
   * Read the manifest and, when the feature is on, wire everything up.
   */
  export async function start(options: IStartOptions): Promise<void> {
    const { app, notebooks, palette, languages, rendermime, trans } = options;
    const preferences = options.preferences;
    const serverSettings =
      app.serviceManager?.serverSettings ?? ServerConnection.makeSettings();
    const api = new CopilotApi(serverSettings);
    // No server extension (or no access to it): stay invisible.
    const manifest = (await api.manifest()).result;
    const page = Array.isArray(manifest?.pages) ? manifest.pages[0] : undefined;
    if (!page) {
      // The feature switch is off; say why when invalid settings turned it off.
      await showConfigErrors(app, api, trans);
      return;
    }
    const url = () =>
      pagePath(window.location.pathname, PageConfig.getBaseUrl());
    const pageId = UUID.uuid4();
    const bridge = new Bridge({ serverSettings, pageId, url });
    const tracker = new PageStateTracker({
      shell: app.shell,
      notebooks,
      bridge,
      url
    });
    const readContext = () => ({ ...readLiveContext(tracker.notebook) });
    // The handler answers when the bridge socket runs on the main thread
    // (no worker allowed) or the snapshot is withdrawn; the snapshot otherwise.
    bridge.registerAction(Actions.getContext, readContext);
    new ContextSnapshot({
      bridge,
      tracker,
      action: Actions.getContext,
      read: readContext
    });

    // Reading cells runs on the main thread, never from a published snapshot:
    // nothing is published for it, so the worker hands every request on.
    bridge.registerAction(Actions.readCells, async data => ({
      ...(await readCells(liveCellReader(tracker.notebook), data))
    }));

    // The panel is its tab at start; what it shows, the reviews and the cards
    // load on first use (parts.ts), off the start bundle.
    const panel: CopilotPanel = new CopilotPanel({
      pageId,
      tracker,
      shell: app.shell,
      trans,
      load: (): Promise<IPanelParts> =>
        import('./parts').then(m =>
          m.buildParts({
            app,
            notebooks,
            palette,
            languages,
            rendermime,
            bridge,
            api,
            pageId,
            panel,
            reviewsHandle: handles.reviews,
            trans,
            preferences
          })
        )
    });
    const loadParts = async (): Promise<IPanelParts> => {
      const loaded = await panel.parts();
      if (!loaded) {
        throw new Error('The Copilot panel could not be loaded.');
      }
      return loaded;
    };
    panel.node.dataset.pageMatch = String(pageMatches(page.match, url()));
    app.shell.add(panel, 'right', { rank: 600 });
    options.restorer?.add(panel, CopilotPanel.ID);
    addCommands(app, panel, notebooks, palette, trans);
    addErrorCommands(app, panel, notebooks, bridge, trans);
    new ErrorActions({
      notebooks,
      commands: app.commands,
      trans,
      allowed: async () => {
        const info = (await api.agents()).result;
        return (
          info?.policy?.allowedContextRefs.includes('cell_outputs') ?? true
        );
      }
    });
    // A card or a file review for the parts: the bridge holds it until they
    // are loaded and connected.
    bridge.held.connect(() => void loadParts().catch(() => undefined));
    // Reviews were open when this tab's page reloaded: the parts say they
    // ended unapplied (changes/reloaded.ts).
    if (hasEndedReviews()) {
      void loadParts().catch(() => undefined);
    }

    // Edit and insert proposals run on the main thread, never from a snapshot:
    // they need the live cell widgets and open a review.
    bridge.registerAction(Actions.editCellInvoke, async data =>
      (await loadParts()).reviews.invoke(data)
    );
    bridge.registerAction(Actions.editCellAbort, async data =>
      (await loadParts()).reviews.abort(data)
    );
    bridge.registerAction(Actions.insertCellInvoke, async data =>
      (await loadParts()).reviews.invokeInsert(data)
    );
    bridge.registerAction(Actions.insertCellAbort, async data =>
      (await loadParts()).reviews.abortInsert(data)
    );
    // A run reaches the page only after the person allowed its card. The
    // runner's code loads on the first run request, off the start bundle.
    let runner: Promise<CellRunner> | null = null;
    const loadRunner = () =>
      (runner ??= import('./run/runner').then(
        m =>
          new m.CellRunner({
            shell: app.shell,
            notebooks,
            translator: options.translator
          })
      ));
    bridge.registerAction(Actions.runCellInvoke, async data => ({
      ...(await (await loadRunner()).invoke(data))
    }));
    bridge.registerAction(Actions.runCellAbort, async data =>
      (await loadRunner()).abort(data)
    );
    bridge.connect();
    handles.bridge.attach(bridge);
  }

  /**
   * Whether the manifest's matcher accepts this page; `false` for a source
   * that this browser cannot compile.
   */
  function pageMatches(source: string, path: string): boolean {
    try {
      return matchesPage(compileMatcher(source), path);
    } catch {
      return false;
    }
  }
}
