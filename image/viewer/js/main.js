// The viewer page: the sidebar of live sessions, and one screen at a time.

import { readAddress, showScreen } from './address.js';
import { followSessions } from './live.js';
import { Sidebar } from './sidebar.js';
import { ScreenView } from './screen.js';
import { HandoffPanel } from './handoff.js';

const $ = (id) => document.getElementById(id);
const status = $('list-status');

const { key, screen, problem } = await readAddress();

const view = new ScreenView(
  {
    screen: $('screen'),
    placeholder: $('placeholder'),
    number: $('screen-number'),
    title: $('screen-title'),
    size: $('screen-size'),
    recording: $('screen-recording'),
    state: $('screen-state'),
    notice: $('notice'),
    viewOnly: $('view-only'),
    lock: $('lock'),
    copy: $('copy'),
  },
  key,
);
const sidebar = new Sidebar($('sessions'), open);
const handoff = new HandoffPanel(
  {
    panel: $('handoff'),
    reason: $('handoff-reason'),
    expected: $('handoff-expected'),
    expectedText: $('handoff-expected-text'),
    timer: $('handoff-timer'),
    note: $('handoff-note'),
    take: $('handoff-take'),
    handBack: $('handoff-back'),
    status: $('handoff-status'),
  },
  key,
  view,
);

// The last list, so a screen opened later finds its session at once.
let sessions = [];

function open(number) {
  view.connect(number);
  view.update(sessions);
  handoff.update(view.session);
  sidebar.select(number);
  showScreen(number);
}

function setStatus(text, isError = false) {
  status.textContent = text;
  status.classList.toggle('error', isError);
}

if (!key) {
  setStatus(problem ?? 'No key: open the viewer link that `computer-use-mcp info` prints.', true);
} else {
  followSessions(key, {
    onStatus: setStatus,
    onMessage(message) {
      if (message.type === 'sessions') {
        sessions = message.sessions;
        sidebar.render(message.sessions);
        view.update(message.sessions);
        handoff.update(view.session);
      } else if (message.type === 'focus') {
        open(message.screen);
        sidebar.highlight(message.screen);
      }
    },
  });
  if (screen) open(screen);
}
