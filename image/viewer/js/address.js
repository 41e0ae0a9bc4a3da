// The address bar: the key arrives in `#key=` once, is kept in local
// storage, and leaves the address bar so it does not end up in history,
// bookmarks or screenshots. `#screen=<n>` stays, so a link opens one screen.

const STORAGE = 'computer-use.viewer-key';

export function readAddress() {
  const params = new URLSearchParams(location.hash.slice(1));
  const linked = params.get('key');
  if (linked) localStorage.setItem(STORAGE, linked);
  const screen = Number.parseInt(params.get('screen') ?? '', 10) || null;
  showScreen(screen);
  return { key: linked || localStorage.getItem(STORAGE), screen };
}

export function showScreen(number) {
  const hash = number ? `#screen=${number}` : '';
  history.replaceState(null, '', location.pathname + location.search + hash);
}

export function socketUrl(path) {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  return `${scheme}://${location.host}${path}`;
}
