// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

import { LabIcon } from '@jupyterlab/ui-components';

/**
 * The Copilot icon: a speech bubble with a spark, drawn for this project.
 */
export const copilotIcon = new LabIcon({
  name: 'jupyter-copilot:copilot',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <path class="jp-icon3" fill="#616161" d="M4 3h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2h-7l-5 4v-4H4a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2zm0 2v10h6v2l2.5-2H20V5H4z"/>
  <path class="jp-icon3" fill="#616161" d="M12 6.5l1.1 2.4 2.4 1.1-2.4 1.1L12 13.5l-1.1-2.4L8.5 10l2.4-1.1z"/>
</svg>`
});
