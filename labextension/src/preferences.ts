// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import type { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import type { ApprovalMode } from './generated/vocabulary';
import { APPROVAL_MODES } from './generated/vocabulary.js';
import { oneOf } from './protocol';

/**
 * The person's preferences for the panel, from JupyterLab's settings
 * (`schema/plugin.json`). They are wishes: the server's policy decides what
 * a conversation may use, and a preference it does not allow gives way to
 * the server's default.
 */
export class Preferences implements IDisposable {
  /**
   * Create the preferences; they hold the schema's defaults until
   * {@link connect} hands them the loaded settings.
   */
  constructor() {
    this._values = Preferences.DEFAULTS;
  }

  /** The current values. */
  get values(): Preferences.IValues {
    return this._values;
  }

  /** Emitted when a value changed, in the settings editor or elsewhere. */
  get changed(): ISignal<this, Preferences.IValues> {
    return this._changed;
  }

  /** Whether the preferences are disposed. */
  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Follow the plugin's settings: read them now and on every change.
   */
  connect(settings: ISettingRegistry.ISettings): void {
    this._settings?.changed.disconnect(this._read, this);
    this._settings = settings;
    settings.changed.connect(this._read, this);
    this._read(settings);
  }

  /**
   * Stop following the settings.
   */
  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._settings?.changed.disconnect(this._read, this);
    Signal.clearData(this);
  }

  private _read(settings: ISettingRegistry.ISettings): void {
    const next = Preferences.parse(settings.composite);
    const v = this._values;
    if (
      next.defaultMode === v.defaultMode &&
      next.defaultAgent === v.defaultAgent &&
      next.openPanelOnApproval === v.openPanelOnApproval
    ) {
      return;
    }
    this._values = next;
    this._changed.emit(next);
  }

  private _values: Preferences.IValues;
  private _settings: ISettingRegistry.ISettings | null = null;
  private _isDisposed = false;
  private _changed = new Signal<this, Preferences.IValues>(this);
}

/**
 * The types and pure helpers of the preferences.
 */
export namespace Preferences {
  /**
   * The preferences, checked.
   */
  export interface IValues {
    /** The mode of a new conversation; `null` for the server's default. */
    defaultMode: ApprovalMode | null;
    /** The agent of a new conversation; `null` for the server's default. */
    defaultAgent: string | null;
    /** Whether a new approval card shows the panel. */
    openPanelOnApproval: boolean;
  }

  /**
   * The values of the schema's defaults.
   */
  export const DEFAULTS: IValues = {
    defaultMode: null,
    defaultAgent: null,
    openPanelOnApproval: true
  };

  /**
   * Check the settings' composite values; anything unexpected counts as
   * the default.
   */
  export function parse(composite: unknown): IValues {
    const c =
      composite && typeof composite === 'object'
        ? (composite as Record<string, unknown>)
        : {};
    const agent =
      typeof c.defaultAgent === 'string' ? c.defaultAgent.trim() : '';
    return {
      defaultMode:
        typeof c.defaultMode === 'string'
          ? (oneOf(APPROVAL_MODES, c.defaultMode) ?? null)
          : null,
      defaultAgent: agent || null,
      openPanelOnApproval: c.openPanelOnApproval !== false
    };
  }
}
