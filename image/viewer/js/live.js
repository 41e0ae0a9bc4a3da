// The session list: one read over HTTP (which answers plainly when the key
// is wrong), then a WebSocket that brings the list after every change and
// the host's requests to show a screen. Reconnects while computerd restarts.

import { socketUrl } from './address.js';

export function followSessions(key, { onMessage, onStatus }) {
  const query = `key=${encodeURIComponent(key)}`;
  let delay = 500;

  const retry = () => {
    setTimeout(start, delay);
    delay = Math.min(delay * 2, 5000);
  };

  async function start() {
    let response;
    try {
      response = await fetch(`/api/sessions?${query}`, { cache: 'no-store' });
    } catch {
      onStatus('The computer does not answer; retrying…', true);
      return retry();
    }
    if (response.status === 403) {
      // A wrong key stays wrong: say so and stop.
      return onStatus(await response.text(), true);
    }
    if (response.status === 429) {
      // Too many wrong keys from this address lately: computerd names the
      // wait (a right key is never refused, so this key is wrong too).
      const wait = Number(response.headers.get('Retry-After')) || 60;
      onStatus(await response.text(), true);
      return setTimeout(start, wait * 1000);
    }
    if (!response.ok) {
      onStatus(`The computer answered ${response.status}; retrying…`, true);
      return retry();
    }
    onMessage(await response.json());
    const socket = new WebSocket(socketUrl(`/api/live?${query}`));
    socket.addEventListener('open', () => {
      delay = 500;
      onStatus('');
    });
    socket.addEventListener('message', (event) => onMessage(JSON.parse(event.data)));
    socket.addEventListener('close', () => {
      onStatus('Lost the computer; reconnecting…', true);
      retry();
    });
  }

  start();
}
