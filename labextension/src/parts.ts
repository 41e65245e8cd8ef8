// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Panel } from '@lumino/widgets';

import type { CopilotApi } from './api';
import { ApprovalModel } from './approvals/model';
import { ApprovalsView } from './approvals/view';
import type { Bridge } from './bridge';
import { ArchiveModel } from './chat/archive';
import { ChatModel } from './chat/model';
import { MentionSource } from './chat/mentionsource';
import type { ChatView } from './chat/view';
import { rememberOpen, takeEndedReviews } from './changes/reloaded';
import { ChangesView } from './changes/view';
import { addReviewCommands, CommandIDs } from './commands';
import { ContextModel } from './contextmodel';
import { ContextView } from './contextview';
import { FileReviewManager } from './filereview/manager';
import type { ReviewsHandle } from './handles';
import type { CopilotPanel } from './panel';
import type { Preferences } from './preferences';
import { cellLinks, findCellById } from './reveal';
import { ReviewManager } from './review/manager';

import '../style/parts.css';

/**
 * What loads on first use, not at JupyterLab's start (docs/protocol.md
 * section 15): the models and views of the panel (approval cards, the changes
 * of the turn, the context, the conversations), the reviews of edits and new
 * cells with their commands, and the reviews of files. It loads when the
 * panel is first shown, when the bridge holds a card or a file review for it,
 * when a proposal comes, or when a command needs it.
 */
export interface IPanelParts {
  /** The context shown in the panel and the attachment. */
  readonly context: ContextModel;
  /** The approval requests shown as cards. */
  readonly approvals: ApprovalModel;
  /** The reviews of proposed edits and new cells. */
  readonly reviews: ReviewManager;
  /** The chat view, loading its own chunk on first use. */
  chatView(): Promise<ChatView | null>;
}

/**
 * What the page's start hands the parts.
 */
export interface IPartsOptions {
  app: JupyterFrontEnd;
  notebooks: INotebookTracker;
  palette: ICommandPalette | null;
  languages: IEditorLanguageRegistry | null;
  rendermime: IRenderMimeRegistry | null;
  bridge: Bridge;
  api: CopilotApi;
  pageId: string;
  panel: CopilotPanel;
  reviewsHandle: ReviewsHandle;
  trans: TranslationBundle;
  preferences: Preferences;
}

/**
 * Build the parts, fill the panel with them and let the bridge deliver the
 * messages it held for them.
 */
export function buildParts(options: IPartsOptions): IPanelParts {
  const { app, notebooks, bridge, api, pageId, panel, trans } = options;
  const preferences = options.preferences;
  const context = new ContextModel({ pageId, api, trans });
  const approvals = new ApprovalModel({
    bridge,
    notebooks,
    shell: app.shell,
    api,
    trans
  });
  const cellLabel = (a: ContextModel.IAttachment) =>
    Private.cellLabel(notebooks, a, trans);
  const chat = new ChatModel({
    pageId,
    context,
    cellLabel,
    api,
    trans,
    preferences
  });
  const archive = new ArchiveModel({
    api,
    trans,
    activeNotebook: () => notebooks.currentWidget?.context.path ?? null,
    takeUp: (conversation, turns) => chat.takeUp(conversation, turns)
  });
  const reviews = new ReviewManager({
    shell: app.shell,
    notebooks,
    bridge,
    languages: options.languages,
    onChange: () => context.scheduleRefresh(),
    trans
  });
  addReviewCommands(app, reviews, options.palette, trans);
  // Proposals to write other files open as tabs of their own; only the
  // server writes, once the person keeps one.
  new FileReviewManager({
    shell: app.shell,
    bridge,
    languages: options.languages,
    api,
    trans
  });

  // The approval cards on top, the changes of the turn under them (what the
  // current turn proposed, and its state), the context, then the chat.
  panel.addWidget(
    new ApprovalsView(approvals, trans, {
      keys: () => Private.reviewKeys(app.commands)
    })
  );
  // The reviews open when the page reloaded ended with it, unapplied: the
  // list says so, and the tab remembers this page's open reviews in turn.
  const ended = takeEndedReviews();
  reviews.changed.connect(() => rememberOpen(reviews.entries()));
  panel.addWidget(
    new ChangesView({
      reviews,
      chat,
      notebooks,
      shell: app.shell,
      trans,
      ended
    })
  );
  if (ended.length) {
    Notification.warning(
      trans._n(
        'A review was open when the page reloaded: it ended unapplied, nothing was changed.',
        '%1 reviews were open when the page reloaded: they ended unapplied, nothing was changed.',
        ended.length
      ),
      {
        autoClose: 8000,
        actions: [
          {
            label: trans.__('Show in Copilot'),
            callback: () => panel.reveal()
          }
        ]
      }
    );
  }
  panel.addWidget(new ContextView(context, trans));
  const conversation = new Panel();
  conversation.addClass('jp-Copilot-Conversation');
  conversation.node.setAttribute('role', 'region');
  conversation.node.setAttribute('aria-label', trans.__('Conversation'));
  panel.addWidget(conversation);

  let view: Promise<ChatView | null> | null = null;
  const chatView = (): Promise<ChatView | null> =>
    (view ??= import('./chat/view')
      .then(({ ChatView }) => {
        if (conversation.isDisposed) {
          return null;
        }
        const chatView = new ChatView({
          model: chat,
          archive,
          context,
          cellLabel,
          cellLinks: cellLinks(app.shell, notebooks),
          rendermime: options.rendermime,
          trans,
          mentions: new MentionSource({
            notebooks,
            context,
            api,
            contents: app.serviceManager.contents,
            trans
          })
        });
        conversation.addWidget(chatView);
        return chatView;
      })
      .catch(() => {
        view = null;
        conversation.node.dataset.loadError = 'true';
        return null;
      }));

  // Show a new card to the person, who may have the panel collapsed, unless
  // their preferences say to leave the panel as it is.
  approvals.added.connect(() => {
    if (preferences.values.openPanelOnApproval ?? true) {
      panel.reveal();
    }
  });
  options.reviewsHandle.attach(reviews);
  // Connected: the cards and file reviews the bridge held come now, in order.
  bridge.release();
  return { context, approvals, reviews, chatView };
}

namespace Private {
  /**
   * The keys bound to the review commands, as JupyterLab shows keys; ""
   * for a command the person left unbound.
   */
  export function reviewKeys(
    commands: JupyterFrontEnd['commands']
  ): ApprovalsView.IKeys {
    // "Alt Shift Enter" as "Alt+Shift+Enter"; a chord's strokes by commas.
    const keys = (command: string) => {
      const binding = commands.keyBindings.find(b => b.command === command);
      return (binding?.keys ?? [])
        .map(k => k.trim().split(/\s+/).join('+'))
        .join(', ');
    };
    return {
      keep: keys(CommandIDs.keepReview),
      undo: keys(CommandIDs.undoReview),
      next: keys(CommandIDs.nextReview)
    };
  }

  /**
   * "Code cell 3" or "Markdown cell 3" for an attached cell of an open
   * notebook, as the server names it; else "Attached cell".
   */
  export function cellLabel(
    notebooks: INotebookTracker,
    a: ContextModel.IAttachment,
    trans: TranslationBundle
  ): string {
    const place = findCellById(notebooks, a.cellId);
    if (place) {
      return place.cellType === 'markdown'
        ? trans.__('Markdown cell %1', place.index + 1)
        : trans.__('Code cell %1', place.index + 1);
    }
    return trans.__('Attached cell');
  }
}
