// Copyright (c) jupyter-copilot contributors.
// Distributed under the terms of the Modified BSD License.

/**
 * The page matcher of docs/protocol.md section 2.
 *
 * The regular expression itself comes from the server's manifest
 * (`pages[0].match`) at run time, so Python and the page share one source of
 * truth. This module has no imports so that node can load it in tests.
 */

/**
 * Compile a matcher source from the manifest.
 *
 * The source is written to read the same in Python and JavaScript and is
 * anchored at both ends already; no flags are added.
 *
 * @param source - The regular expression source.
 * @throws SyntaxError when the source is not a valid JavaScript pattern.
 */
export function compileMatcher(source: string): RegExp {
  return new RegExp(source);
}

/**
 * The matcher's input for a location pathname: the pathname with the base
 * URL's pathname removed, without a leading slash, still percent-encoded.
 *
 * @param pathname - `location.pathname` (query and hash are not part of it).
 * @param baseUrl - The server's base URL, absolute (`http://h/user/a/`) or a
 *   bare path (`/user/a/`).
 */
export function pagePath(pathname: string, baseUrl: string): string {
  const base = Private.basePathname(baseUrl);
  let path = pathname;
  if (path.startsWith(base)) {
    path = path.slice(base.length);
  } else if (path + '/' === base) {
    path = '';
  }
  return path.replace(/^\/+/, '');
}

/**
 * Whether a page path is one the manifest's page applies to.
 *
 * A match is only a hint: every call still checks the active notebook.
 *
 * @param re - The compiled matcher.
 * @param path - A page path from {@link pagePath}.
 */
export function matchesPage(re: RegExp, path: string): boolean {
  re.lastIndex = 0;
  return re.test(path);
}

namespace Private {
  /**
   * The pathname of a base URL, always with a trailing slash.
   */
  export function basePathname(baseUrl: string): string {
    let path = baseUrl;
    const scheme = /^[a-z][a-z0-9+.-]*:\/\/[^/]*/i.exec(path);
    if (scheme) {
      path = path.slice(scheme[0].length);
    }
    path = path.split(/[?#]/)[0];
    if (!path.startsWith('/')) {
      path = '/' + path;
    }
    return path.endsWith('/') ? path : path + '/';
  }
}
