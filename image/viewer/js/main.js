// The viewer page: the sidebar of live sessions, and one screen at a time.

import { readAddress, showScreen } from './address.js';
import { followSessions } from './live.js';
import { Sidebar } from './sidebar.js';
import { ScreenView } from './screen.js';

const $ = (id) => document.getElementById(id);
const status = $('list-status');

const { key, screen } = readAddress();

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

function open(number) {
  view.connect(number);
  sidebar.select(number);
  showScreen(number);
}

function setStatus(text, isError = false) {
  status.textContent = text;
  status.classList.toggle('error', isError);
}

if (!key) {
  setStatus('No key: open the viewer link that `computer-use-mcp info` prints.', true);
} else {
  followSessions(key, {
    onStatus: setStatus,
    onMessage(message) {
      if (message.type === 'sessions') {
        sidebar.render(message.sessions);
        view.update(message.sessions);
      } else if (message.type === 'focus') {
        open(message.screen);
        sidebar.highlight(message.screen);
      }
    },
  });
  if (screen) open(screen);
}
