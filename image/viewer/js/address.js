// The address bar: the key arrives once, in `#key=` (a link someone
// copied) or as `#code=`, a one-time code the host's link carries so the
// key is in no command line, traded here for the key. The key is kept in
// local storage and leaves the address bar so it does not end up in
// history, bookmarks or screenshots. `#screen=<n>` stays, so a link opens
// one screen. `problem` says why a code did not open.
//
// A handoff's link also carries `#handoff=<id>&handback=<code>`: the code
// Hand back needs, made by the host and never held by the computer. It is
// kept per handoff (a few at most) for the panel, and leaves the address
// bar too.

const STORAGE = 'computer-use.viewer-key';
const HANDBACKS = 'computer-use.handbacks';
const HANDBACKS_KEPT = 16;

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
  const handoff = params.get('handoff');
  const handback = params.get('handback');
  if (handoff && handback) keepHandback(handoff, handback);
  return { key: linked || localStorage.getItem(STORAGE), screen, problem };
}

function keepHandback(handoff, code) {
  const kept = Object.entries(handbacks()).filter(([id]) => id !== handoff);
  kept.push([handoff, code]);
  localStorage.setItem(HANDBACKS, JSON.stringify(Object.fromEntries(kept.slice(-HANDBACKS_KEPT))));
}

function handbacks() {
  try {
    return JSON.parse(localStorage.getItem(HANDBACKS) ?? '{}') ?? {};
  } catch {
    return {};
  }
}

// The hand-back code of handoff `id`, when a link brought it here.
export function handbackCode(id) {
  return handbacks()[id] ?? null;
}

export function showScreen(number) {
  const hash = number ? `#screen=${number}` : '';
  history.replaceState(null, '', location.pathname + location.search + hash);
}

export function socketUrl(path) {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  return `${scheme}://${location.host}${path}`;
}
