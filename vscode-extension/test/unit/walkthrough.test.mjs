// The "Debug with Strata" walkthrough (package.json's contributes.walkthroughs): every step's
// screenshot is in media/, small enough for the vsix, and every link runs a command that exists
// with arguments it takes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const ext = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const pkg = JSON.parse(fs.readFileSync(path.join(ext, 'package.json'), 'utf8'));
const [walkthrough] = pkg.contributes.walkthroughs;
// VS Code's own commands the steps run.
const BUILT_IN = new Set(['workbench.action.debug.start', 'debug.startFromConfig']);

// A PNG's width and height from its IHDR chunk.
function pngSize(file) {
  const b = fs.readFileSync(file);
  assert.equal(b.toString('latin1', 1, 4), 'PNG', `${file} is a PNG`);
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20), bytes: b.length };
}

test('the walkthrough: Python, native, attach, GPU, each with its screenshot in media/', () => {
  assert.equal(walkthrough.id, 'strata.start');
  assert.deepEqual(walkthrough.steps.map((s) => s.id), ['python', 'native', 'attach', 'gpu']);
  for (const s of walkthrough.steps) {
    assert.match(s.media.image, /^media\/[\w-]+\.png$/, s.id);
    assert.ok(s.media.altText.length > 20, `${s.id}: the image is described`);
    const size = pngSize(path.join(ext, s.media.image));
    assert.ok(size.width <= 1000 && size.bytes <= 150_000, `${s.media.image}: ${size.width} px, ${size.bytes} bytes`);
  }
  // Nothing in media/ that no step shows (it would only make the vsix bigger).
  assert.deepEqual(fs.readdirSync(path.join(ext, 'media')).sort(),
    walkthrough.steps.map((s) => path.basename(s.media.image)).sort());
});

test('every step\'s link runs a contributed or built-in command; the attach link starts an attach through the picker', () => {
  const ours = new Set(pkg.contributes.commands.map((c) => c.command));
  for (const s of walkthrough.steps) {
    const links = [...s.description.matchAll(/\]\(command:([\w.]+)(?:\?([^)]*))?\)/g)];
    assert.equal(links.length, 1, `${s.id}: one button`);
    const [, command, args] = links[0];
    assert.ok(ours.has(command) || BUILT_IN.has(command), `${s.id}: ${command}`);
    for (const e of s.completionEvents ?? []) {
      const c = e.replace(/^onCommand:/, '');
      assert.ok(ours.has(c) || BUILT_IN.has(c), `${s.id}: completion event ${e}`);
    }
    if (s.id !== 'attach') continue;
    const config = JSON.parse(decodeURIComponent(args));
    assert.deepEqual(config, { type: 'strata', request: 'attach', name: 'Attach to a process',
      processId: '${command:strata.pickProcess}' });
    // The variable names the command the debugger contribution declares for it.
    assert.equal(pkg.contributes.debuggers[0].variables.pickProcess, 'strata.pickProcess');
    assert.ok(pkg.contributes.debuggers[0].configurationAttributes.attach.properties.processId);
  }
});
