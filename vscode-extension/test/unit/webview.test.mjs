// The GPU timeline webview's files (out/webviewFiles.js) against webview/ as it is: every file
// the panel needs is there, the page loads exactly those scripts in that order under its content
// security policy, and the template is filled as the panel fills it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const ext = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const files = require(path.join(ext, 'out/webviewFiles.js'));
const page = fs.readFileSync(path.join(ext, 'webview', files.WEBVIEW_PAGE), 'utf8');

test('every webview file the panel lists is in webview/, and nothing is missing', () => {
  for (const f of files.WEBVIEW_FILES) assert.ok(fs.existsSync(path.join(ext, 'webview', f)), f);
  assert.deepEqual(files.missingWebviewFiles(ext), []);
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-webview-'));
  fs.mkdirSync(path.join(empty, 'webview'));
  fs.writeFileSync(path.join(empty, 'webview', 'timeline.css'), '');
  assert.deepEqual(files.missingWebviewFiles(empty), files.WEBVIEW_FILES.filter((f) => f !== 'timeline.css'));
  // Every script in webview/ is one the page loads (a new file is listed, or it would not ship in use).
  const scripts = fs.readdirSync(path.join(ext, 'webview')).filter((f) => f.endsWith('.js')).sort();
  assert.deepEqual(scripts, [...files.WEBVIEW_SCRIPTS].sort());
});

test('the page loads the listed scripts in order, each by nonce from the webview folder; no inline script', () => {
  const tags = [...page.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
  assert.deepEqual(tags.map((t) => t[1].match(/src="\{\{root\}\}\/([^"]+)"/)?.[1]), files.WEBVIEW_SCRIPTS);
  for (const [, attrs, body] of tags) {
    assert.match(attrs, /nonce="\{\{nonce\}\}"/);
    assert.equal(body.trim(), '', 'no inline script');
  }
  assert.match(page, /<link rel="stylesheet" href="\{\{root\}\}\/timeline\.css">/);
  const csp = page.match(/http-equiv="Content-Security-Policy"\s+content="([^"]+)"/)[1];
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'nonce-\{\{nonce\}\}'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
  assert.doesNotMatch(page, /\son[a-z]+="/, 'no inline event handlers');
});

test('the template is filled with the panel\'s values; an unknown placeholder is left as it is', () => {
  const html = files.fillTemplate(page, { cspSource: 'vscode-webview://x', nonce: 'N0NCE', root: 'https://res/webview' });
  assert.doesNotMatch(html, /\{\{\w+\}\}/);
  assert.ok(html.includes('<script nonce="N0NCE" src="https://res/webview/timeline.js"></script>'));
  assert.ok(html.includes("script-src 'nonce-N0NCE'"));
  assert.equal(files.fillTemplate('{{a}} {{b}}', { a: '1' }), '1 {{b}}');
});
