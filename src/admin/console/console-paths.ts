/** Where the console's pages live on the admin listener (docs/admin-console.md). */
export const CONSOLE_PATH = '/admin';
export const SIGN_IN_PATH = '/admin/sign-in';
export const ASSETS_PATH = '/admin/assets';

/** Whether a text holds a backslash or a control character (both can turn a path into another host). */
function hasBackslashOrControl(text: string): boolean {
  for (const c of text) {
    const code = c.charCodeAt(0);
    if (c === '\\' || code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/**
 * Where sign-in may send the browser back to: a path of the console on this listener, as given;
 * anything else (another site, `//host`, a backslash, the API, a control character) is the
 * overview. No open redirect.
 */
export function safeNext(next: string | undefined): string {
  const fallback = '/admin/';
  if (next === undefined || next.length > 2000) return fallback;
  if (!/^\/admin(?:[/?]|$)/.test(next) || hasBackslashOrControl(next)) return fallback;
  let url: URL;
  try {
    url = new URL(next, 'http://console.invalid');
  } catch {
    return fallback;
  }
  if (url.origin !== 'http://console.invalid') return fallback;
  const path = url.pathname;
  if (!(path === '/admin' || path.startsWith('/admin/')) || path.startsWith('/admin/v1') || path === SIGN_IN_PATH) {
    return fallback;
  }
  return path + url.search;
}
