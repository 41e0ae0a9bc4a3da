// One screen at a time through noVNC. Every connection starts locked (view
// only); Unlock hands the person the mouse, the keyboard and the clipboard,
// Lock takes them back. The lock lives in this page only.
//
// The screen's clipboard reaches the person's only on the person's own
// action: the Copy button, or their Ctrl+C (Cmd+C) on the screen followed
// by the text it copied. A page or the agent on the computer sets the
// screen's clipboard whenever it likes; pushing that onto the person's
// clipboard would let it plant a command they later paste (pastejacking).

import RFB from '../novnc/core/rfb.js';
import KeyTable from '../novnc/core/input/keysym.js';
import { socketUrl } from './address.js';

const BLOCKED = 'Clipboard blocked by the browser';

// After the person's Ctrl+C, text the screen copies within this long is
// theirs: the app needs a moment to take the selection and Xvnc to send it.
const COPY_WINDOW_MS = 2000;

export class ScreenView {
  constructor(elements, key) {
    this.el = elements;
    this.key = key;
    this.rfb = null;
    this.number = null;
    this.session = null;
    this.state = '';
    this.locked = true;
    // The text last copied on the screen, kept until the person asks.
    this.screenClipboard = null;
    // When the person last pressed Ctrl+C (Cmd+C) on the screen.
    this.copyPressedAt = -Infinity;
    this.el.lock.addEventListener('click', () => this.setLocked(!this.locked));
    this.el.copy.addEventListener('click', () => this.copyToPerson(this.screenClipboard));
    // Capture phase: runs before noVNC's own key handling on its canvas.
    this.el.screen.addEventListener('keydown', (e) => this.onKeyDown(e), true);
  }

  connect(number) {
    if (this.rfb && this.number === number) return;
    this.disconnect();
    this.number = number;
    this.el.placeholder?.remove();
    const url = socketUrl(`/api/screen/${number}?key=${encodeURIComponent(this.key)}`);
    const rfb = new RFB(this.el.screen, url, { credentials: { password: this.key } });
    rfb.scaleViewport = true;
    rfb.addEventListener('connect', () => this.setState('', rfb));
    rfb.addEventListener('disconnect', (e) =>
      this.setState(e.detail.clean ? 'Disconnected' : 'Connection lost', rfb));
    rfb.addEventListener('securityfailure', () => this.setState('The screen refused the key', rfb));
    rfb.addEventListener('credentialsrequired', () => rfb.sendCredentials({ password: this.key }));
    rfb.addEventListener('clipboard', (e) => this.screenCopied(e.detail.text, rfb));
    this.rfb = rfb;
    this.screenClipboard = null;
    this.setLocked(true);
    this.el.notice.textContent = '';
    this.setState('Connecting…', rfb);
  }

  disconnect() {
    if (!this.rfb) return;
    const rfb = this.rfb;
    this.rfb = null;
    rfb.disconnect();
  }

  // The list changed: refresh what the bar says about this screen.
  update(sessions) {
    this.session = sessions.find((s) => s.screen === this.number) ?? null;
    this.render();
  }

  setLocked(locked) {
    this.locked = locked;
    if (this.rfb) this.rfb.viewOnly = locked;
    this.render();
  }

  setState(text, rfb) {
    if (rfb !== this.rfb) return;
    this.state = text;
    this.render();
  }

  render() {
    const { number, title, size, state, lock, viewOnly } = this.el;
    const open = this.number != null;
    number.textContent = open ? `Screen ${this.number}` : 'No screen';
    title.textContent = this.session?.title ?? '';
    size.textContent = this.session?.size ?? '';
    // People watching should know the agent's actions here are recorded.
    this.el.recording.hidden = !this.session?.recording;
    state.textContent = this.session?.ended ? `${this.state} (session ended)`.trim() : this.state;
    lock.disabled = !this.rfb;
    lock.textContent = this.locked ? 'Unlock' : 'Lock';
    lock.dataset.locked = String(this.locked);
    this.el.copy.disabled = !(this.rfb && !this.locked && this.screenClipboard != null);
    viewOnly.hidden = !(this.rfb && this.locked);
  }

  // The screen's clipboard changed: kept for the Copy button, and put on the
  // person's clipboard only right after their own Ctrl+C.
  screenCopied(text, rfb) {
    if (rfb !== this.rfb) return;
    this.screenClipboard = text;
    this.render();
    if (performance.now() - this.copyPressedAt <= COPY_WINDOW_MS) {
      this.copyPressedAt = -Infinity;
      this.copyToPerson(text);
    }
  }

  // Puts text from the screen on the person's clipboard, on their action.
  async copyToPerson(text) {
    if (this.locked || text == null) return;
    try {
      await navigator.clipboard.writeText(text);
      this.clipboardWorks();
    } catch {
      this.el.notice.textContent = BLOCKED;
    }
  }

  // Ctrl+V (Cmd+V) on the screen: the person's clipboard goes to the screen
  // first, then the screen gets Ctrl+V, which is how its apps paste.
  onKeyDown(e) {
    if (this.locked || !this.rfb) return;
    // Ctrl+C (Cmd+C, and Ctrl+Shift+C of terminals) goes on to the screen;
    // the text it copies there comes back to the person's clipboard.
    if (e.code === 'KeyC' && (e.ctrlKey || e.metaKey) && !e.altKey) {
      this.copyPressedAt = performance.now();
      return;
    }
    if (e.code !== 'KeyV' || !(e.ctrlKey || e.metaKey) || e.altKey || e.shiftKey) return;
    e.preventDefault();
    e.stopPropagation();
    const rfb = this.rfb;
    const command = e.metaKey && !e.ctrlKey;
    navigator.clipboard.readText().then(
      (text) => {
        this.clipboardWorks();
        if (rfb !== this.rfb || this.locked) return;
        rfb.clipboardPasteFrom(text);
        // On macOS the person holds Cmd, which the screen sees as Super.
        if (command) rfb.sendKey(KeyTable.XK_Super_L, 'MetaLeft', false);
        if (command) rfb.sendKey(KeyTable.XK_Control_L, 'ControlLeft', true);
        rfb.sendKey(KeyTable.XK_v, 'KeyV');
        if (command) rfb.sendKey(KeyTable.XK_Control_L, 'ControlLeft', false);
      },
      () => {
        this.el.notice.textContent = BLOCKED;
      },
    );
  }

  clipboardWorks() {
    if (this.el.notice.textContent === BLOCKED) this.el.notice.textContent = '';
  }
}
