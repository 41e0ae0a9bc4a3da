// The handoff panel: when the agent asks the person to take this screen,
// its reason and what the screen should show when done (both as text,
// never as HTML: the agent writes them), how long the person has held it,
// a note field, Take control (unlocks input) and Hand back. Both buttons
// post to computerd with the key; Hand back also sends the hand-back code
// that only the host's link for this handoff carried, so nothing inside the
// computer can hand back in the person's name.

import { handbackCode } from './address.js';

const TICK_MS = 1000;

export class HandoffPanel {
  constructor(elements, key, view) {
    this.el = elements;
    this.key = key;
    this.view = view;
    this.hold = null;
    this.screen = null;
    this.el.take.addEventListener('click', () => this.take());
    this.el.handBack.addEventListener('click', () => this.handBack());
    setInterval(() => this.renderTimer(), TICK_MS);
  }

  // The list changed, or another screen is shown.
  update(session) {
    const hold = session?.handoff ?? null;
    const changed = hold?.id !== this.hold?.id;
    this.hold = hold;
    this.screen = session?.screen ?? null;
    this.el.panel.hidden = !hold;
    if (!hold) return;
    if (changed) {
      this.el.note.value = '';
      this.el.status.textContent = '';
    }
    this.el.reason.textContent = hold.reason;
    this.el.expected.hidden = !hold.expected;
    this.el.expectedText.textContent = hold.expected ?? '';
    this.renderTimer();
  }

  renderTimer() {
    if (!this.hold) return;
    const seconds = Math.max(0, Math.floor((Date.now() - Date.parse(this.hold.started_at)) / 1000));
    const minutes = Math.floor(seconds / 60);
    this.el.timer.textContent = `held for ${minutes}:${String(seconds % 60).padStart(2, '0')}`;
  }

  async take() {
    if (await this.post({ action: 'take' })) {
      this.view.setLocked(false);
      this.el.status.textContent = 'You have control. Hand back when you are done.';
    }
  }

  async handBack() {
    const handback = this.hold ? handbackCode(this.hold.id) : null;
    if (!handback) {
      this.el.status.textContent =
        'This tab cannot hand back: use the viewer tab that opened for this request (its link carries the hand-back code).';
      return;
    }
    const note = this.el.note.value.trim();
    if (await this.post({ action: 'return', note: note || null, handback })) {
      this.view.setLocked(true);
      this.el.status.textContent = 'Handed back to the agent.';
    }
  }

  async post(body) {
    if (this.screen == null) return false;
    const url = `/api/handoff/${this.screen}?key=${encodeURIComponent(this.key)}`;
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (!response.ok) {
        this.el.status.textContent = await response.text();
        return false;
      }
      return true;
    } catch {
      this.el.status.textContent = 'The computer does not answer; try again.';
      return false;
    }
  }
}
