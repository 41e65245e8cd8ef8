// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { TranslationBundle } from '@jupyterlab/translation';

import { ClientCodes, IRefusal } from '../api';
import { REFUSAL_TEXT } from '../protocol';

/**
 * The words of the chat for what went wrong. They never name a model, a
 * runtime or a path.
 */
export namespace ChatTexts {
  /**
   * Said when a running reply's stream broke off and its outcome cannot be read.
   */
  export function lost(trans: TranslationBundle): string {
    return trans.__(
      'The connection to the Copilot server was lost before the reply ended.'
    );
  }

  /**
   * Said when the server's policy refused the preferred agent or mode and
   * the conversation started with the server's defaults instead.
   */
  export function preferenceRefused(trans: TranslationBundle): string {
    return trans.__(
      "This server does not allow your default agent or mode; the conversation uses the server's default."
    );
  }

  /**
   * Said when the default agent of the person's settings is not one this
   * server offers: it is left aside, visibly.
   *
   * @param id - The id the settings name.
   * @param used - The label of the agent used instead; "" for none.
   */
  export function unknownAgent(
    id: string,
    used: string,
    trans: TranslationBundle
  ): string {
    return used
      ? trans.__(
          'Your default agent "%1" (Settings Editor, Copilot) is not offered by this server, so %2 is used. The Agent menu lists the agents on offer: point at one to see its id.',
          id,
          used
        )
      : trans.__(
          'Your default agent "%1" (Settings Editor, Copilot) is not offered by this server. The Agent menu lists the agents on offer: point at one to see its id.',
          id
        );
  }

  /**
   * Why a request of the chat failed, for a person.
   *
   * @param error - The refusal the API call resolved to.
   */
  export function failure(error: IRefusal, trans: TranslationBundle): string {
    switch (error.code) {
      case ClientCodes.UNREACHABLE:
        return trans.__('The Copilot server cannot be reached. Try again.');
      case ClientCodes.BAD_REPLY:
        return trans.__('Something went wrong. Try again.');
      case 'conversation-busy':
        return trans.__(
          'A reply is still running. Wait for it, or press Stop.'
        );
      case 'stale-source':
        return trans.__(
          'The attached cell changed after it was attached. Attach it again and resend.'
        );
      case 'cell-not-found':
        return trans.__(
          'The attached cell is gone. Attach another cell, or send without one.'
        );
      case 'unknown-conversation':
        return trans.__(
          'This conversation no longer exists on the server. Start a new conversation.'
        );
      case 'feature-disabled':
        return trans.__(REFUSAL_TEXT['feature-disabled']);
      default:
        return (
          error.message || trans.__('The Copilot server refused the request.')
        );
    }
  }
}
