// The person's side of a handoff, in real headless Chromium: the viewer
// shows the agent's request on the held screen (as text), the person takes
// control, writes a note and hands back. Run by host/tests/engine/mcp_handoff.rs,
// which holds the screen first and checks the agent's side after. Env:
//   VIEWER_URL (the link request_handoff returned: the key only),
//   PERSON_URL (the tab the host opened for the person: a one-time code for
//   the key and the hand-back code), REASON, EXPECTED, NOTE.
// Waits poll a condition with a deadline; nothing sleeps blindly.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const { VIEWER_URL, PERSON_URL, REASON, EXPECTED, NOTE } = process.env;
for (const [name, value] of Object.entries({ VIEWER_URL, PERSON_URL, REASON, EXPECTED, NOTE })) {
  if (!value) throw new Error(`${name} is not set: run this through \`cargo test -p computer-use-mcp --test engine mcp_handoff::\``);
}
const viewer = new URL(VIEWER_URL);
const params = new URLSearchParams(viewer.hash.slice(1));
const KEY = params.get('key');
const SCREEN = params.get('screen');

let browser;

before(async () => {
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
});

after(async () => {
  await browser?.close();
});

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

test('only the viewer, with the key and its own origin, may act on a hold', async () => {
  const url = `${viewer.origin}/api/handoff/${SCREEN}`;
  // No Origin (a script, or a page of another site that hides it).
  let response = await fetch(`${url}?key=${KEY}`, { method: 'POST', body: '{"action":"return"}' });
  assert.equal(response.status, 403, await response.text());
  // Another site's page in the person's browser.
  response = await fetch(`${url}?key=${KEY}`, {
    method: 'POST',
    headers: { origin: 'http://evil.test' },
    body: '{"action":"return"}',
  });
  assert.equal(response.status, 403);
  // Our origin without the key (a page inside the computer has no key).
  response = await fetch(`${url}?key=wrongkey`, {
    method: 'POST',
    headers: { origin: viewer.origin },
    body: '{"action":"return"}',
  });
  assert.equal(response.status, 403);
  // Our origin and the key, which a program inside the computer can read,
  // but no hand-back code or a wrong one: the hold stays.
  for (const body of ['{"action":"return"}', '{"action":"return","handback":"0123456789abcdef0123456789abcdef"}']) {
    response = await fetch(`${url}?key=${KEY}`, {
      method: 'POST',
      headers: { origin: viewer.origin, 'content-type': 'application/json' },
      body,
    });
    const said = await response.text();
    assert.equal(response.status, 403, said);
    assert.match(said, /hand-back code/);
  }
});

test('the held screen shows the request; the person takes control and hands back with a note', async () => {
  const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  // What the page fetched and failed, and what it logged, for a timeout.
  const trouble = [];
  page.on('requestfailed', (r) => trouble.push(`${r.url()} failed: ${r.failure()?.errorText}`));
  page.on('response', (r) => r.status() >= 400 && trouble.push(`${r.url()} answered ${r.status()}`));
  page.on('console', (m) => m.type() === 'error' && trouble.push(`console: ${m.text()}`));
  await page.goto(PERSON_URL);
  // The codes leave the address bar.
  await waitFor('a clean address bar', async () => !page.url().includes('handback='));
  const panel = page.locator('#handoff');
  // On a timeout, what the page said and what its list held tell why.
  await waitFor('the handoff panel', () => panel.isVisible()).catch(async (e) => {
    const said = await page.locator('#list-status').textContent().catch(() => '?');
    const listed = await page.locator('#sessions').innerText().catch(() => '?');
    throw new Error(
      `${e.message}; the page's status: ${JSON.stringify(said)}; its list: ${JSON.stringify(listed)}; ` +
        `errors: ${JSON.stringify(errors.map(String))}; trouble: ${JSON.stringify(trouble)}`,
    );
  });
  // The reason is the agent's text, shown as text: no markup of it runs.
  assert.equal(await page.locator('#handoff-reason').textContent(), REASON);
  assert.equal(await page.locator('#handoff-reason b').count(), 0);
  assert.equal(await page.locator('#handoff-expected-text').textContent(), EXPECTED);
  assert.match(await page.locator('#handoff-warning').textContent(), /can see this screen and what you type/);
  await waitFor('the timer', async () => /held for \d+:\d\d/.test(await page.locator('#handoff-timer').textContent()));
  await waitFor('the mark in the list', () => page.locator('#sessions .held').isVisible());
  assert.equal(await page.locator('#lock').textContent(), 'Unlock');

  await waitFor('the screen to connect', async () => !(await page.locator('#lock').isDisabled()));
  await page.locator('#handoff-take').click();
  await waitFor('input unlocked', async () => (await page.locator('#lock').textContent()) === 'Lock');
  await page.locator('#handoff-note').fill(NOTE);
  await page.locator('#handoff-back').click();
  await waitFor('the panel to go', async () => !(await panel.isVisible()));
  await waitFor('input locked again', async () => (await page.locator('#lock').textContent()) === 'Unlock');
  assert.equal(await page.locator('#sessions .held').count(), 0);
  assert.deepEqual(errors, []);
  await context.close();
});
