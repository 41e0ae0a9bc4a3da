// The address bar: the key arrives once, in `#key=` (a link someone
// copied) or as `#code=`, a one-time code the host's link carries so the
// key is in no command line, traded here for the key. The key is kept in
// local storage and leaves the address bar so it does not end up in
// history, bookmarks or screenshots. `#screen=<n>` stays, so a link opens
// one screen. `problem` says why a code did not open.

const STORAGE = 'computer-use.viewer-key';

export async function readAddress() {
  const params = new URLSearchParams(location.hash.slice(1));
  let linked = params.get('key');
  let problem = null;
  const code = params.get('code');
  const screen = Number.parseInt(params.get('screen') ?? '', 10) || null;
  showScreen(screen);
  if (code && !linked) {
    try {
      const response = await fetch(`/api/code?code=${encodeURIComponent(code)}`, { cache: 'no-store' });
      if (response.ok) linked = (await response.json()).key;
      else problem = await response.text();
    } catch {
      problem = 'The computer does not answer; open the viewer link again.';
    }
  }
  if (linked) localStorage.setItem(STORAGE, linked);
  return { key: linked || localStorage.getItem(STORAGE), screen, problem };
}

export function showScreen(number) {
  const hash = number ? `#screen=${number}` : '';
  history.replaceState(null, '', location.pathname + location.search + hash);
}

export function socketUrl(path) {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  return `${scheme}://${location.host}${path}`;
}
