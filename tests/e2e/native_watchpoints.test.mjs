// Data breakpoints that fire: they need debug registers that trap, which some hypervisors
// accept and never fire. This file holds only those cases, so where the probe says no, every
// case is skipped with the reason and ctest reports the file as skipped, not passed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { TARGETS, assertClean } from './lib/harness.mjs';
import { demoSrc, lineOf, launchNative, frames, continueTo } from './lib/native.mjs';

const probe = execFileSync(path.join(TARGETS, 'native_hw_probe'), { encoding: 'utf8' }).trim();
const hwTraps = probe === 'yes';

test('a data breakpoint stops after each write with old and new value',
  { skip: hwTraps ? false : `hardware watchpoints do not trap on this machine (${probe}): the stop cannot be checked here` },
  async () => {
    const { c, stopped } = await launchNative(['watch'], { breakpoints: { [demoSrc]: [{ line: lineOf(demoSrc, 'watch_write') }] } });
    const tid = stopped.body.threadId;
    const top = (await frames(c, tid)).stackFrames[0];
    const info = await c.send('dataBreakpointInfo', { name: 'watched_counter', frameId: top.id });
    const set = await c.send('setDataBreakpoints', { breakpoints: [{ dataId: info.body.dataId, accessType: 'write' }] });
    await c.setBreakpointsRequest({ source: { path: demoSrc }, breakpoints: [] });
    const s1 = await continueTo(c, tid);
    assert.equal(s1.body.reason, 'data breakpoint');
    assert.equal(s1.body.description, 'watched_counter: 0 -> 1');
    assert.deepEqual(s1.body.hitBreakpointIds, [set.body.breakpoints[0].id]);
    const s2 = await continueTo(c, tid);
    assert.equal(s2.body.description, 'watched_counter: 1 -> 2');
    await c.send('setDataBreakpoints', { breakpoints: [] });
    const term = c.waitForEvent('terminated', 30000);
    await c.continueRequest({ threadId: tid });
    await term;
    assert.match(c.output('stdout'), /counter 5\n/);
    await c.disconnectRequest();
    assertClean(assert, c);
  });
