// A recording's package page (index.html) in real headless Chromium, opened
// from disk as a person would: file://, no server, the network off.
//   PACKAGE_DIR     the package folder (index.html, walkthrough.json, frames/)
//   EXPECT_TEXTS    optional JSON array of strings the page's text must hold
//   FORBIDDEN_TEXT  optional string that must appear nowhere in the page
// Try it on the hand-made sample:
//   cd walkthrough-sample && node make-sample.mjs && cd ..
//   PACKAGE_DIR=$PWD/walkthrough-sample EXPECT_TEXTS='["Sign in"]' node --test walkthrough.test.mjs
// Waits poll a condition with a deadline; nothing sleeps blindly.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const { PACKAGE_DIR, FORBIDDEN_TEXT } = process.env;
if (!PACKAGE_DIR) throw new Error('PACKAGE_DIR is not set: name a recording package folder (see the top of this file)');
const INDEX = path.join(PACKAGE_DIR, 'index.html');
for (const file of [INDEX, path.join(PACKAGE_DIR, 'walkthrough.json')]) {
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: PACKAGE_DIR must be a package folder`);
}
const EXPECT_TEXTS = JSON.parse(process.env.EXPECT_TEXTS || '[]');
if (!Array.isArray(EXPECT_TEXTS)) throw new Error('EXPECT_TEXTS must be a JSON array of strings');
const walkthrough = JSON.parse(fs.readFileSync(path.join(PACKAGE_DIR, 'walkthrough.json'), 'utf8'));
const steps = walkthrough.steps;
const PAGE_URL = pathToFileURL(INDEX).href;

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
    ],
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

// Opens the package offline; everything that tried to leave the disk, and
// every console error, is collected on the page for the checks.
async function openPackage({ hash = '' } = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.setOffline(true);
  const offDisk = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('file:')) return route.continue();
    offDisk.push(url);
    return route.abort();
  });
  const page = await context.newPage();
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  // Requests the route does not see (or sees too late) still show here.
  page.on('request', (r) => { if (!r.url().startsWith('file:') && !offDisk.includes(r.url())) offDisk.push(r.url()); });
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} (${r.failure()?.errorText})`));
  await page.goto(PAGE_URL + hash);
  Object.assign(page, { offDisk, problems });
  return page;
}

// Every image of the page loaded: waits while any is still loading, then
// names those that finished without pixels (missing or not an image).
async function allImagesLoaded(page) {
  await waitFor('every image of the page to finish loading', async () => {
    const loading = await page.evaluate(() =>
      Array.from(document.images).filter((i) => !i.complete).map((i) => i.getAttribute('src')));
    if (loading.length) throw new Error(`still loading: ${loading.join(', ')}`);
    return true;
  });
  const broken = await page.evaluate(() =>
    Array.from(document.images).filter((i) => i.naturalWidth === 0).map((i) => i.getAttribute('src')));
  assert.deepEqual(broken, [], `images without pixels (missing or broken): ${broken.join(', ')}`);
}

function assertClean(page) {
  assert.deepEqual(page.offDisk, [], `the page asked for something not on disk: ${page.offDisk.join(', ')}`);
  assert.deepEqual(page.problems, [], `the page reported problems:\n${page.problems.join('\n')}`);
}

// Which steps (their numbers) the timeline and the step list show.
const shownSteps = (page) => page.evaluate(() => {
  const shown = (e) => e.getClientRects().length > 0;
  return {
    timeline: Array.from(document.querySelectorAll('#steps-list li[data-step]')).filter(shown).map((e) => Number(e.dataset.step)),
    sections: Array.from(document.querySelectorAll('section.step')).filter(shown).map((e) => Number(e.id.replace('step-', ''))),
  };
});

test('the package page shows every step, its frames and texts, offline', async () => {
  const page = await openPackage();
  assert.deepEqual(page.offDisk, [], `the page asked for something not on disk: ${page.offDisk.join(', ')}`);
  await allImagesLoaded(page);

  const sectionIds = await page.$$eval('section.step', (all) => all.map((s) => s.id));
  assert.equal(sectionIds.length, steps.length,
    `the page has ${sectionIds.length} section.step for ${steps.length} steps in walkthrough.json`);

  const pageFrames = await page.$$eval('section.step', (all) =>
    Object.fromEntries(all.map((s) => [s.id, Array.from(s.querySelectorAll('img'), (i) => i.getAttribute('src'))])));
  for (const step of steps) {
    const id = `step-${step.index}`;
    assert.ok(pageFrames[id], `step ${step.index} (${step.tool}) has no <section id="${id}">`);
    for (const which of ['before', 'after']) {
      if (step[which]) {
        assert.ok(pageFrames[id].includes(step[which]),
          `step ${step.index} (${step.tool}): its ${which} frame ${step[which]} is not shown (images: ${pageFrames[id].join(', ') || 'none'})`);
      }
    }
    const placed = (step.points || []).filter((p) => typeof p.left === 'number' && typeof p.top === 'number').length;
    const markers = await page.locator(`#${id} .marker`).count();
    assert.equal(markers, step.before ? placed : 0, `step ${step.index}: ${markers} pointer markers for ${placed} points on its before frame`);
  }

  const text = await page.evaluate(() => document.body.innerText);
  for (const expected of EXPECT_TEXTS) {
    assert.ok(text.includes(expected), `the page's text lacks ${JSON.stringify(expected)}`);
  }
  if (walkthrough.full) {
    assert.ok(/size limit/i.test(text), 'the recording is full but the page does not say it reached its size limit');
  }
  if (FORBIDDEN_TEXT) {
    const source = fs.readFileSync(INDEX, 'utf8');
    const html = await page.content();
    for (const [where, what] of [['index.html', source], ['the page DOM', html], ['the page text', text]]) {
      assert.ok(!what.includes(FORBIDDEN_TEXT), `${JSON.stringify(FORBIDDEN_TEXT)} appears in ${where}`);
    }
  }
  assertClean(page);
  await page.context().close();
});

test('the filters show only errors, only notes, then everything', async () => {
  const page = await openPackage();
  const all = steps.map((s) => s.index);
  const want = {
    errors: steps.filter((s) => s.is_error).map((s) => s.index),
    notes: steps.filter((s) => s.kind === 'note').map((s) => s.index),
    all,
  };
  for (const filter of ['errors', 'notes', 'all']) {
    await page.locator(`[data-filter="${filter}"]`).click();
    const shown = await shownSteps(page);
    assert.deepEqual(shown.timeline, want[filter], `the ${filter} filter shows steps ${shown.timeline} in the timeline, not ${want[filter]}`);
    assert.deepEqual(shown.sections, want[filter], `the ${filter} filter shows step sections ${shown.sections}, not ${want[filter]}`);
  }
  assertClean(page);
  await page.context().close();
});

test('the keyboard moves the selection and the address follows', async (t) => {
  if (steps.length < 2) return t.skip('fewer than two steps');
  const page = await openPackage();
  const selected = () => page.evaluate(() => document.querySelector('#steps-list li[aria-current="step"]')?.dataset.step);
  const [first, second] = steps;
  await page.keyboard.press('Home');
  await waitFor('Home to select the first step', async () => (await page.evaluate(() => location.hash)) === `#step-${first.index}`);
  await page.keyboard.press('j');
  await waitFor(`j to move to #step-${second.index}`, async () => (await page.evaluate(() => location.hash)) === `#step-${second.index}`);
  assert.equal(await selected(), String(second.index), 'after j the timeline does not mark the second step');
  await page.keyboard.press('k');
  await waitFor('k to move back to the first step', async () => (await page.evaluate(() => location.hash)) === `#step-${first.index}`);
  await page.keyboard.press('End');
  await waitFor('End to select the last step', async () =>
    (await page.evaluate(() => location.hash)) === `#step-${steps.at(-1).index}`);
  const firstError = steps.find((s) => s.is_error);
  if (firstError) {
    await page.keyboard.press('Home');
    await page.keyboard.press('e');
    await waitFor(`e to select the first error (#step-${firstError.index})`, async () =>
      (await page.evaluate(() => location.hash)) === `#step-${firstError.index}`);
  }
  assertClean(page);
  await page.context().close();
});

test('an address with #step-N opens on that step', async () => {
  const target = steps.at(-1);
  if (!target) return;
  const page = await openPackage({ hash: `#step-${target.index}` });
  await waitFor(`step ${target.index} to be selected`, () =>
    page.evaluate((n) => document.querySelector(`#steps-list li[data-step="${n}"]`)?.getAttribute('aria-current') === 'step', target.index));
  await waitFor(`section step-${target.index} to be in view`, () =>
    page.evaluate((n) => {
      const r = document.getElementById(`step-${n}`).getBoundingClientRect();
      return r.top < innerHeight && r.bottom > 0;
    }, target.index));
  assertClean(page);
  await page.context().close();
});

test('a frame opens at full size and Esc closes it', async (t) => {
  const withFrame = steps.find((s) => s.before || s.after);
  if (!withFrame) return t.skip('no step has a frame');
  const page = await openPackage();
  await page.locator(`#step-${withFrame.index} .frame`).first().click();
  await waitFor('the full-size frame', () => page.locator('#lightbox').isVisible());
  assert.equal(await page.locator('#lightbox img').count(), 1, 'the full-size view shows no image');
  await page.keyboard.press('Escape');
  await waitFor('Esc to close the full-size frame', () => page.locator('#lightbox').isHidden());
  assertClean(page);
  await page.context().close();
});
