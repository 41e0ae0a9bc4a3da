// Builds this sample package's index.html (and manifest.json) from the page
// template the way computerd/src/recording/package.rs does: the JSON of
// walkthrough.json with `<`, `>` and `&` written as \u003c, \u003e, \u0026
// replaces the first `__WALKTHROUGH_JSON__`. Run: node make-sample.mjs

import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const template = fs.readFileSync(path.join(here, '../../../../protocol/src/walkthrough.html'), 'utf8');
const placeholder = '__WALKTHROUGH_JSON__';
const found = template.split(placeholder).length - 1;
if (found !== 1) throw new Error(`the template holds ${placeholder} ${found} times, not once`);

const json = fs.readFileSync(path.join(here, 'walkthrough.json'), 'utf8');
JSON.parse(json); // fail here on a broken sample, not in the browser
const escaped = json.replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
// A function, not a string: a replacement string would expand `$&` and `$'`.
fs.writeFileSync(path.join(here, 'index.html'), template.replace(placeholder, () => escaped));

// manifest.json: sha256 and size of every other file, sorted by path.
const files = [];
for (const name of ['index.html', 'walkthrough.json', ...fs.readdirSync(path.join(here, 'frames')).map((f) => `frames/${f}`)]) {
  const bytes = fs.readFileSync(path.join(here, name));
  files.push({ path: name, size: bytes.length, sha256: crypto.createHash('sha256').update(bytes).digest('hex') });
}
files.sort((a, b) => (a.path < b.path ? -1 : 1));
fs.writeFileSync(path.join(here, 'manifest.json'), JSON.stringify({ format: 'computer-use-manifest/1', files }, null, 2));
console.log(`index.html: ${fs.statSync(path.join(here, 'index.html')).size} bytes`);
