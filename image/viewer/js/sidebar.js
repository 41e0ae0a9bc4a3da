// The sidebar: one button per live session, newest last.

export class Sidebar {
  constructor(list, onPick) {
    this.list = list;
    this.onPick = onPick;
    this.sessions = [];
    this.current = null;
    this.highlighted = null;
  }

  render(sessions) {
    this.sessions = sessions;
    if (sessions.length === 0) {
      const empty = document.createElement('li');
      empty.className = 'empty';
      empty.textContent = 'No sessions yet.';
      this.list.replaceChildren(empty);
    } else {
      this.list.replaceChildren(...sessions.map((s) => this.item(s)));
    }
  }

  select(screen) {
    this.current = screen;
    this.render(this.sessions);
  }

  // Flashes the screen's line once, when the host asked to show it.
  highlight(screen) {
    this.highlighted = screen;
    this.render(this.sessions);
    setTimeout(() => {
      if (this.highlighted === screen) this.highlighted = null;
    }, 2500);
  }

  item(session) {
    const li = document.createElement('li');
    li.dataset.screen = session.screen ?? '';
    li.setAttribute('aria-current', String(session.screen != null && session.screen === this.current));
    if (session.screen != null && session.screen === this.highlighted) li.classList.add('highlight');

    const button = document.createElement('button');
    button.type = 'button';
    button.disabled = session.screen == null;
    button.addEventListener('click', () => this.onPick(session.screen));

    const title = document.createElement('span');
    title.className = 'title';
    title.textContent = session.title;
    if (session.handoff) {
      const mark = document.createElement('span');
      mark.className = 'held';
      mark.title = 'The agent asks you to take over this screen';
      mark.textContent = 'needs you';
      title.append(' ', mark);
    }
    if (session.recording) {
      const mark = document.createElement('span');
      mark.className = 'recording';
      mark.title = "The agent's actions on this screen are being recorded";
      mark.textContent = 'recording';
      title.append(' ', mark);
    }
    const meta = document.createElement('span');
    meta.className = 'meta';
    meta.textContent = describe(session);
    button.append(title, meta);
    li.append(button);
    return li;
  }
}

function describe(session) {
  const started = new Date(session.started_at).toLocaleTimeString([], {
    hour: '2-digit',
    minute: '2-digit',
  });
  const where = session.screen == null ? 'no screen yet' : `Screen ${session.screen}`;
  const viewers = `${session.viewers} viewer${session.viewers === 1 ? '' : 's'}`;
  const ended = session.ended ? ' · ended' : '';
  return `${where} · started ${started} · ${viewers}${ended}`;
}
