// The viewer page in real headless Chromium against a real computerd and
// real Xvnc screens. Run by computerd/tests/daemon/viewer_browser.rs, which starts
// the daemon and passes its addresses:
//   API_URL, TOKEN (the token API), VIEWER_URL, KEY (the viewer).
// Waits poll a condition with a deadline; nothing sleeps blindly.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { chromium } from 'playwright-core';

const { API_URL, TOKEN, VIEWER_URL, KEY } = process.env;
for (const [name, value] of Object.entries({ API_URL, TOKEN, VIEWER_URL, KEY })) {
  if (!value) throw new Error(`${name} is not set: run this through \`cargo test -p computerd --test daemon viewer_browser::\``);
}
const VIEWER_PORT = new URL(VIEWER_URL).port;
// A name that resolves to 127.0.0.1 only inside this browser: a page of
// another site after DNS rebinding.
const REBOUND = 'rebind.test';

let browser;

before(async () => {
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      `--host-resolver-rules=MAP ${REBOUND} 127.0.0.1`,
    ],
  });
});

after(async () => {
  await browser?.close();
});

// ---- the computer, through its API ----

async function api(method, path, body) {
  const response = await fetch(API_URL + path, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} -> ${response.status}: ${text}`);
  return JSON.parse(text);
}

async function startSession(title) {
  const { session_id } = await api('POST', '/v1/sessions', { title, owner: 'browser-test' });
  return session_id;
}

// Opens the session's screen; returns its number and first screenshot.
async function openScreen(session) {
  const observation = await api('POST', `/v1/sessions/${session}/observe`, {});
  const { sessions } = await api('GET', '/v1/sessions');
  const screen = sessions.find((s) => s.session_id === session).screen;
  return { screen, observation };
}

async function shell(session, command) {
  const result = await api('POST', `/v1/sessions/${session}/shell`, { command });
  assert.equal(result.exit_code, 0, `\`${command}\` failed: ${result.stderr}`);
  return result.stdout;
}

// `command` as a program of the desktop: with the desktop's X cookie,
// which the shell tool's own programs do not get (theirs is untrusted, so
// they cannot read other windows, move the pointer or serve the
// clipboard). The test plays the desktop's side here.
async function desktopShell(session, command) {
  return shell(session, `export XAUTHORITY="$HOME/.local/share/computer-use/x-desktop-cookie"; ${command}`);
}

async function waitFor(what, check, limitMs = 15000) {
  const deadline = Date.now() + limitMs;
  let last;
  for (;;) {
    try {
      last = await check();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${limitMs} ms waiting for ${what} (last: ${last})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// An xterm of one flat color at a known place; returns its geometry in
// screen pixels. With `clickMarker`, the first click inside it creates that
// file (the terminal asks for mouse reports and exits on the first byte).
async function drawWindow(session, { title, color, clickMarker }) {
  // A program of its own, not a shell, so no prompt retitles the window.
  const program = clickMarker
    ? ` -e bash -c 'printf "\\033[?1000h"; IFS= read -rsn1 _; touch ${clickMarker}'`
    : ' -e sleep 600';
  await shell(
    session,
    `xterm -T ${title} -geometry 50x16+120+120 -bg '${color}' -fg '${color}' -cr '${color}'${program} >/dev/null 2>&1 &`,
  );
  const out = await waitFor(`the window ${title}`, () =>
    desktopShell(session, `xdotool search --onlyvisible --name '^${title}$' getwindowgeometry --shell || true`));
  const value = (name) => Number(out.match(new RegExp(`^${name}=(\\d+)$`, 'm'))[1]);
  return { x: value('X'), y: value('Y'), width: value('WIDTH'), height: value('HEIGHT') };
}

async function pointerAt(session) {
  const out = await desktopShell(session, 'xdotool getmouselocation --shell');
  const value = (name) => Number(out.match(new RegExp(`^${name}=(\\d+)$`, 'm'))[1]);
  return { x: value('X'), y: value('Y') };
}

async function fileExists(session, path) {
  return (await shell(session, `test -e ${path} && echo yes || echo no`)).trim() === 'yes';
}

// ---- the page ----

async function openPage({ hash = `key=${KEY}`, permissions = ['clipboard-read', 'clipboard-write'] } = {}) {
  const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
  if (permissions.length) await context.grantPermissions(permissions, { origin: VIEWER_URL });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  await page.goto(`${VIEWER_URL}/#${hash}`);
  page.errors = errors;
  return page;
}

const sidebarItem = (page, title) => page.locator('#sessions li', { hasText: title });

// Waits until noVNC's canvas has a frame of the given size.
async function screenCanvas(page, { width, height }) {
  await waitFor('the screen canvas', () =>
    page.evaluate(([w, h]) => {
      const c = document.querySelector('#screen canvas');
      return c && c.width === w && c.height === h;
    }, [width, height]));
}

// Page coordinates of a screen pixel, wherever noVNC scaled the canvas to.
async function pagePoint(page, x, y) {
  return page.evaluate(([x, y]) => {
    const c = document.querySelector('#screen canvas');
    const r = c.getBoundingClientRect();
    return { x: r.left + ((x + 0.5) * r.width) / c.width, y: r.top + ((y + 0.5) * r.height) / c.height };
  }, [x, y]);
}

async function clickScreen(page, x, y) {
  const p = await pagePoint(page, x, y);
  await page.mouse.click(p.x, p.y);
}

// Share of sampled pixels (every 8th in both directions) in which the canvas
// and the PNG differ by at most 8 per channel.
async function matchWithCapture(page, pngBase64) {
  return page.evaluate(async (png) => {
    const bytes = Uint8Array.from(atob(png), (ch) => ch.charCodeAt(0));
    const image = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
    const drawn = new OffscreenCanvas(image.width, image.height).getContext('2d');
    drawn.drawImage(image, 0, 0);
    const want = drawn.getImageData(0, 0, image.width, image.height).data;
    const canvas = document.querySelector('#screen canvas');
    if (canvas.width !== image.width || canvas.height !== image.height) return 0;
    const have = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    let same = 0;
    let total = 0;
    for (let y = 0; y < image.height; y += 8) {
      for (let x = 0; x < image.width; x += 8) {
        const i = (y * image.width + x) * 4;
        total += 1;
        if ([0, 1, 2].every((c) => Math.abs(want[i + c] - have[i + c]) <= 8)) same += 1;
      }
    }
    return same / total;
  }, pngBase64);
}

async function canvasPixel(page, x, y) {
  return page.evaluate(([x, y]) => {
    const c = document.querySelector('#screen canvas');
    return Array.from(c.getContext('2d').getImageData(x, y, 1, 1).data.slice(0, 3));
  }, [x, y]);
}

async function unlock(page) {
  await page.locator('#lock', { hasText: 'Unlock' }).click();
  await waitFor('the page to unlock', () => page.locator('#view-only').isHidden());
}

// ---- the tests ----

test('the key moves from the address bar to local storage; #screen stays', async () => {
  const page = await openPage({ hash: `key=${KEY}&screen=16` });
  await waitFor('the key to leave the address bar', async () => !page.url().includes(KEY));
  assert.equal(new URL(page.url()).hash, '#screen=16');
  assert.equal(await page.evaluate(() => localStorage.getItem('computer-use.viewer-key')), KEY);
  // The stored key serves a later visit without one.
  await page.goto(`${VIEWER_URL}/`);
  await waitFor('the list to load with the stored key', () =>
    page.locator('#sessions li').first().isVisible());
  assert.equal(await page.locator('#list-status').textContent(), '');
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('a one-time code in the link opens the page once, and never shows the key', async () => {
  // The host opens links with a code (a command line is public to every
  // user of the machine); the page trades it for the key.
  const { code } = await api('POST', '/v1/viewer/code', {});
  assert.equal(code.length, 32);
  const page = await openPage({ hash: `code=${code}&screen=16` });
  await waitFor('the list to load with the traded key', () =>
    page.locator('#sessions li').first().isVisible());
  assert.equal(new URL(page.url()).hash, '#screen=16');
  assert.equal(await page.evaluate(() => localStorage.getItem('computer-use.viewer-key')), KEY);
  assert.equal(await page.locator('#list-status').textContent(), '');
  assert.deepEqual(page.errors, []);
  await page.context().close();
  // Used once, it opens nothing more, and says why.
  const again = await openPage({ hash: `code=${code}` });
  await waitFor('the used code to be named', async () =>
    (await again.locator('#list-status').textContent()).includes('used already'));
  await again.context().close();
});

test('a module lost on the way (the network changed) reloads the page, which then works', async () => {
  // Chromium drops requests in flight when an interface comes or goes
  // (ERR_NETWORK_CHANGED); here one of noVNC's modules fails once the same way.
  const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
  const page = await context.newPage();
  let dropped = 0;
  await page.route('**/novnc/core/websock.js', (route) => {
    if (dropped++ === 0) return route.abort('internetdisconnected');
    return route.continue();
  });
  await page.goto(`${VIEWER_URL}/#key=${KEY}`);
  await waitFor('the list after the reload', () => page.locator('#sessions li').first().isVisible());
  assert.equal(dropped, 2, 'the module was asked for once more, after the reload');
  assert.equal(await page.locator('#list-status').textContent(), '');
  assert.equal(await page.evaluate(() => sessionStorage.getItem('computer-use.viewer-boot-tries')), null);
  await context.close();
});

test('the list follows sessions as they start and end', async () => {
  const page = await openPage();
  const title = `List check ${Date.now()}`;
  const session = await startSession(title);
  await waitFor('the new session in the sidebar', () => sidebarItem(page, title).isVisible());
  assert.match(await sidebarItem(page, title).textContent(), /no screen yet · started .* · 0 viewers/);
  const { screen } = await openScreen(session);
  await waitFor('its screen in the sidebar', async () =>
    (await sidebarItem(page, title).textContent()).includes(`Screen ${screen} `));
  await api('DELETE', `/v1/sessions/${session}`);
  await waitFor('the ended session to leave the sidebar', async () =>
    (await sidebarItem(page, title).count()) === 0);
  await page.context().close();
});

test('a recorded session is marked in the list and the bar, and the mark goes when it stops', async () => {
  const title = `Recorded ${Date.now()}`;
  const session = await startSession(title);
  const { screen } = await openScreen(session);
  const page = await openPage({ hash: `key=${KEY}&screen=${screen}` });
  const barMark = page.locator('#screen-recording');
  await waitFor('the session in the sidebar', () => sidebarItem(page, title).isVisible());
  assert.equal(await sidebarItem(page, title).locator('.recording').count(), 0);
  assert.equal(await barMark.isVisible(), false);
  await api('POST', `/v1/sessions/${session}/recording`, { task: 'viewer mark', max_bytes: 1048576 });
  await waitFor('the red mark in the sidebar', () => sidebarItem(page, title).locator('.recording').isVisible());
  assert.equal(await sidebarItem(page, title).locator('.recording').textContent(), 'recording');
  await waitFor('the red mark in the bar', () => barMark.isVisible());
  const dot = await barMark.evaluate((e) => getComputedStyle(e, '::before').backgroundColor);
  assert.equal(dot, 'rgb(217, 48, 37)');
  await api('POST', `/v1/sessions/${session}/recording/stop`, {});
  await waitFor('the mark to go', async () =>
    (await sidebarItem(page, title).locator('.recording').count()) === 0 && !(await barMark.isVisible()));
  await page.context().close();
  await api('DELETE', `/v1/sessions/${session}`);
});

test('a connected screen shows what the screen shows, and starts locked', async () => {
  const session = await startSession('Canvas check');
  const { screen } = await openScreen(session);
  const area = await drawWindow(session, { title: 'canvascheck', color: '#12ab34' });
  const page = await openPage({ hash: `key=${KEY}&screen=${screen}` });
  await screenCanvas(page, { width: 1280, height: 800 });
  const middle = [area.x + area.width / 2, area.y + area.height / 2].map(Math.round);
  await waitFor('the green window on the canvas', async () =>
    (await canvasPixel(page, ...middle)).join() === [0x12, 0xab, 0x34].join());
  // The whole canvas against the screen's own capture, taken now. An
  // unchanged screen comes without an image: the last one still holds.
  let capture = null;
  await waitFor('the canvas to match the capture', async () => {
    const { image_base64 } = await api('POST', `/v1/sessions/${session}/observe`, {});
    capture = image_base64 ?? capture;
    return capture && (await matchWithCapture(page, capture)) >= 0.99;
  });
  await waitFor('the bar', async () =>
    (await page.locator('#bar').innerText()).includes('Canvas check'));
  const bar = await page.locator('#bar').innerText();
  assert.match(bar, new RegExp(`Screen ${screen}`));
  assert.match(bar, /1280x800/);
  assert.match(bar, /View only/);
  assert.equal(await page.locator('#lock').textContent(), 'Unlock');
  const { sessions } = await api('GET', '/v1/sessions');
  assert.equal(sessions.find((s) => s.session_id === session).viewers, 1);
  await page.context().close();
  await api('DELETE', `/v1/sessions/${session}`);
});

test('a click reaches the screen only after Unlock', async () => {
  const session = await startSession('Click check');
  const { screen } = await openScreen(session);
  const marker = `~/clicked-${Date.now()}`;
  const area = await drawWindow(session, { title: 'clickcheck', color: '#2040c0', clickMarker: marker });
  const page = await openPage({ hash: `key=${KEY}&screen=${screen}` });
  await screenCanvas(page, { width: 1280, height: 800 });
  const middle = [area.x + area.width / 2, area.y + area.height / 2].map(Math.round);
  await waitFor('the window on the canvas', async () =>
    (await canvasPixel(page, ...middle)).join() === [0x20, 0x40, 0xc0].join());

  await clickScreen(page, ...middle);
  // Unlocked input travels the same socket after the locked click: once the
  // screen's pointer reached this empty spot, a locked click would have
  // been delivered too.
  await unlock(page);
  const empty = [900, 600];
  await clickScreen(page, ...empty);
  await waitFor('the pointer to reach the empty spot', async () => {
    const p = await pointerAt(session);
    // Scaling the canvas may round a pixel either way.
    return Math.abs(p.x - empty[0]) <= 2 && Math.abs(p.y - empty[1]) <= 2;
  });
  assert.equal(await fileExists(session, marker), false, 'the click while locked reached the screen');

  await clickScreen(page, ...middle);
  await waitFor('the unlocked click to reach the window', () => fileExists(session, marker));

  await page.locator('#lock', { hasText: 'Lock' }).click();
  assert.equal(await page.locator('#view-only').isVisible(), true);
  await page.context().close();
  await api('DELETE', `/v1/sessions/${session}`);
});

test('clipboard text crosses both ways while unlocked', async () => {
  const session = await startSession('Clipboard check');
  const { screen } = await openScreen(session);
  const page = await openPage({ hash: `key=${KEY}&screen=${screen}` });
  await screenCanvas(page, { width: 1280, height: 800 });
  await unlock(page);

  // Screen to person, only when the person asks: text a page or the agent
  // copies on the screen reaches the page, which keeps it for the button.
  const personHad = `the own text of the person ${Date.now()}`;
  await page.evaluate((text) => navigator.clipboard.writeText(text), personHad);
  const fromScreen = `copied on the screen ${Date.now()}`;
  await desktopShell(session, `printf '%s' '${fromScreen}' | xclip -selection clipboard -i >/dev/null 2>&1`);
  // The page has the text once its Copy button is enabled (or, had it
  // pushed the text, once the clipboard changed).
  await waitFor('the page to get the screen text', async () =>
    (await page.evaluate(() => document.getElementById('copy')?.disabled === false)) ||
    (await page.evaluate(() => navigator.clipboard.readText())) !== personHad);
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), personHad,
    'the screen pushed its clipboard onto the person\'s');
  await page.locator('#copy').click();
  await waitFor('the screen text on the clipboard', async () =>
    (await page.evaluate(() => navigator.clipboard.readText())) === fromScreen);

  // The person's Ctrl+C on the screen: what it copies comes over by itself.
  await clickScreen(page, 900, 600);
  await page.keyboard.press('Control+KeyC');
  const copiedByKey = `copied with the Ctrl+C of the person ${Date.now()}`;
  await desktopShell(session, `printf '%s' '${copiedByKey}' | xclip -selection clipboard -i >/dev/null 2>&1`);
  await waitFor('the Ctrl+C text on the clipboard', async () =>
    (await page.evaluate(() => navigator.clipboard.readText())) === copiedByKey);

  // Person to screen: Ctrl+V on the screen.
  const fromPerson = `pasted by the person ${Date.now()}`;
  await page.evaluate((text) => navigator.clipboard.writeText(text), fromPerson);
  await clickScreen(page, 900, 600);
  await page.keyboard.press('Control+KeyV');
  await waitFor('the person text on the screen clipboard', async () =>
    (await desktopShell(session, 'xclip -selection clipboard -o 2>/dev/null || true')) === fromPerson);
  assert.equal(await page.locator('#notice').textContent(), '');
  await page.context().close();
  await api('DELETE', `/v1/sessions/${session}`);
});

test('a browser that refuses clipboard access says so', async () => {
  const session = await startSession('Clipboard refused');
  const { screen } = await openScreen(session);
  const page = await openPage({ hash: `key=${KEY}&screen=${screen}`, permissions: [] });
  await screenCanvas(page, { width: 1280, height: 800 });
  await unlock(page);
  await clickScreen(page, 900, 600);
  await page.keyboard.press('Control+KeyV');
  await waitFor('the notice', async () =>
    (await page.locator('#notice').textContent()) === 'Clipboard blocked by the browser');
  await page.context().close();
  await api('DELETE', `/v1/sessions/${session}`);
});

test('the host can switch open pages to a screen', async () => {
  const page = await openPage();
  await waitFor('the page on the live channel', async () => (await api('GET', '/v1/viewer')).pages >= 1);
  const session = await startSession('Focus check');
  const { screen } = await openScreen(session);
  const { pages } = await api('POST', '/v1/viewer/focus', { screen });
  assert.ok(pages >= 1, `focus reached ${pages} pages`);
  await waitFor('the page on the screen', async () => new URL(page.url()).hash === `#screen=${screen}`);
  await waitFor('the highlight', () =>
    page.locator(`#sessions li.highlight[data-screen="${screen}"]`).isVisible());
  await screenCanvas(page, { width: 1280, height: 800 });
  assert.equal(await page.locator('#lock').textContent(), 'Unlock');
  await page.context().close();
  await api('DELETE', `/v1/sessions/${session}`);
});

test('a wrong key, a foreign Host and a foreign Origin are refused', async () => {
  const session = await startSession('Refusal check');
  const { screen } = await openScreen(session);

  // Wrong key: the page says so and lists nothing; its sockets do not open.
  const page = await openPage({ hash: 'key=wrongkey' });
  await waitFor('the wrong-key message', async () =>
    (await page.locator('#list-status').textContent()).includes('wrong viewer key'));
  assert.equal(await sidebarItem(page, 'Refusal check').count(), 0);
  const opens = (path) =>
    page.evaluate(
      (url) =>
        new Promise((resolve) => {
          const socket = new WebSocket(url);
          socket.onopen = () => {
            socket.close();
            resolve('open');
          };
          socket.onerror = () => resolve('refused');
        }),
      `ws://127.0.0.1:${VIEWER_PORT}${path}`,
    );
  assert.equal(await opens(`/api/screen/${screen}?key=wrongkey`), 'refused');
  assert.equal(await opens(`/api/live?key=wrongkey`), 'refused');
  // The same page with the right key gets through: the refusals were the key's.
  assert.equal(await opens(`/api/screen/${screen}?key=${KEY}`), 'open');
  assert.equal(await opens(`/api/live?key=${KEY}`), 'open');

  // Foreign Host: the viewer reached under another name.
  const rebound = await page.goto(`http://${REBOUND}:${VIEWER_PORT}/`);
  assert.equal(rebound.status(), 403);
  await page.context().close();

  // Foreign Origin: a page of another site opens the viewer's sockets with
  // the right key.
  const site = http.createServer((_, res) => res.end('<!doctype html><title>other site</title>'));
  await new Promise((resolve) => site.listen(0, '127.0.0.1', resolve));
  try {
    const other = await browser.newPage();
    await other.goto(`http://127.0.0.1:${site.address().port}/`);
    const fromOther = (path) =>
      other.evaluate(
        (url) =>
          new Promise((resolve) => {
            const socket = new WebSocket(url);
            socket.onopen = () => resolve('open');
            socket.onerror = () => resolve('refused');
          }),
        `ws://127.0.0.1:${VIEWER_PORT}${path}`,
      );
    assert.equal(await fromOther(`/api/screen/${screen}?key=${KEY}`), 'refused');
    assert.equal(await fromOther(`/api/live?key=${KEY}`), 'refused');
    await other.close();
  } finally {
    site.close();
  }
  await api('DELETE', `/v1/sessions/${session}`);
});
