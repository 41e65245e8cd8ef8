// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { PathExt } from '@jupyterlab/coreutils';
import type { TranslationBundle } from '@jupyterlab/translation';

import { REFUSAL_TEXT } from '../protocol';
import type { FileReviewOutcome, IFileReview } from '../protocol';

/**
 * The words of a file review. The path and the agent's name are data: they
 * are shown as text, never as markup.
 */
export namespace FileReviewTexts {
  /**
   * The tab's label: "Review: notes.txt".
   */
  export function title(path: string, trans: TranslationBundle): string {
    return trans.__('Review: %1', PathExt.basename(path));
  }

  /**
   * The header's parts: who proposes, what it would do, and to which path.
   */
  export function header(
    review: IFileReview,
    trans: TranslationBundle
  ): {
    agent: string;
    verb: string;
    path: string;
  } {
    return {
      agent: review.agentLabel || trans.__('An agent'),
      verb:
        review.original === null
          ? trans.__('proposes to create')
          : trans.__('proposes to change'),
      path: review.path
    };
  }

  /**
   * Said once Keep went through.
   */
  export function written(trans: TranslationBundle): string {
    return trans.__('Written.');
  }

  /**
   * Whether a refused decision ends the review (Undo becomes Dismiss), and
   * the words why. Keep is never tried again after a refusal.
   *
   * @param code - The refusal code of `POST copilot/api/file-reviews/<id>`;
   *   `read-only` comes from a server that does not let this person write.
   * @param message - The server's own words, used for other codes.
   */
  export function refusal(
    code: string,
    message: string,
    trans: TranslationBundle
  ): { ended: boolean; text: string } {
    switch (code) {
      case 'stale-source':
        return {
          ended: true,
          text: trans.__(
            'The file changed since this was proposed; nothing was written.'
          )
        };
      case 'kill-switch':
        return {
          ended: false,
          text: trans.__(
            '%1 Nothing was written.',
            trans.__(REFUSAL_TEXT['kill-switch'])
          )
        };
      case 'aborted':
        return {
          ended: true,
          text: trans.__('This proposal was already decided or withdrawn.')
        };
      case 'outside-root':
        return {
          ended: true,
          text: trans.__(
            "This file is outside the server's folder, so it cannot be written."
          )
        };
      case 'denied':
        return {
          ended: true,
          text: trans.__(
            'Only the person whose conversation this is can decide it; nothing was written.'
          )
        };
      case 'read-only':
        return {
          ended: false,
          text:
            message ||
            trans.__(
              'You may not write files on this server; nothing was written.'
            )
        };
      default:
        return {
          ended: false,
          text:
            message ||
            trans.__(
              'The Copilot server did not accept the decision; nothing was written.'
            )
        };
    }
  }

  /**
   * The words for a decision that did not reach the server or its answer.
   *
   * @param network - Whether the server could not be reached at all.
   */
  export function failure(network: boolean, trans: TranslationBundle): string {
    return network
      ? trans.__('The Copilot server could not be reached. Try again.')
      : trans.__('The Copilot server could not take the decision. Try again.');
  }

  /**
   * How a review ended, as the server said (`file-review-ended`).
   */
  export function ended(
    decision: FileReviewOutcome,
    trans: TranslationBundle
  ): string {
    switch (decision) {
      case 'keep':
        return trans.__('Kept: the file was written.');
      case 'undo':
        return trans.__('Undone: nothing was written.');
      case 'conflict':
        return trans.__(
          'The file changed since this was proposed; nothing was written.'
        );
      case 'withdrawn':
        return trans.__(
          'The conversation ended, so this proposal was withdrawn; nothing was written.'
        );
      default:
        return trans.__('This proposal is no longer open.');
    }
  }
}
