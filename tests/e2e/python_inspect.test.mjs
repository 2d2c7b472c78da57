// Python inspection through strata-dap, on every interpreter in STRATA_PYTHONS: variables
// paging for every container, class attributes apart, guarded reprs, truncation, tensor and
// module summaries (parameters and buffers counted recursively) that never read data, evaluate
// in every context, setVariable, setExpression and completions — one stop of
// tests/targets/python/inspect_me.py.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { assertClean, forEachPython } from './lib/harness.mjs';
import { lineOf, pyTarget, launchAndStop, topFrame, locals } from './lib/python.mjs';

const program = pyTarget('inspect_me.py');

forEachPython((py) => {
  const v = path.basename(py);

  test(`${v}: paging, summaries, guarded reprs, evaluate, set and completions at one stop`, async () => {
    const { c, stopped } = await launchAndStop(py, program, { breakpoints: { [program]: [{ line: lineOf(program, 'inspect') }] } });
    const tid = stopped.body.threadId;
    const frame = (await topFrame(c, tid)).id;
    const vars = await locals(c, frame);
    const kids = async (x, args = {}) =>
      (await c.variablesRequest({ variablesReference: x.variablesReference, ...args })).body.variables;
    const pairs = (list) => list.map((x) => [x.name, x.value]);

    // Lists page by start/count, each child with the expression that names it.
    assert.equal(vars.big.indexedVariables, 100000);
    assert.match(vars.big.value, /length 100000/);
    const page = await kids(vars.big, { filter: 'indexed', start: 50000, count: 100 });
    assert.equal(page.length, 100);
    assert.deepEqual([page[0].name, page[99].value, page[3].evaluateName], ['[50000]', '50099', 'big[50003]']);
    // dict, set, str, bytes, deque, tuple.
    assert.equal(vars.d.indexedVariables, 50);
    assert.deepEqual(pairs(await kids(vars.d, { filter: 'indexed', start: 10, count: 2 })), [["'k10'", '10'], ["'k11'", '11']]);
    assert.equal(vars.s.indexedVariables, 3);
    assert.equal(vars.raw.indexedVariables, 20);
    assert.equal(vars.dq.indexedVariables, 3);
    assert.deepEqual((await kids(vars.dq)).map((x) => x.value), ['1', '2', '3']);
    assert.equal(vars.tup.indexedVariables, 3);
    assert.deepEqual(pairs(await kids(vars.tup, { filter: 'indexed', start: 1, count: 2 })), [['[1]', "'two'"], ['[2]', '3.0']]);
    // A long value is cut, with its length said.
    assert.equal(vars.text.indexedVariables, 3000);
    assert.match(vars.text.value, /^'abcabc.*\.\.\. \(length 3000\)$/);
    assert.ok(vars.text.value.length < 1100, `${vars.text.value.length} characters`);
    assert.deepEqual(pairs(await kids(vars.text, { filter: 'indexed', start: 2998, count: 2 })), [['[2998]', "'b'"], ['[2999]', "'c'"]]);
    // Attributes first, class attributes in a group of their own.
    const pt = await kids(vars.pt);
    assert.deepEqual(pt.slice(0, 2).map((x) => x.name), ['x', 'y']);
    const group = pt.find((x) => x.name === 'class attributes');
    assert.deepEqual(pairs(await kids(group)), [['dims', '2']]);
    // A repr that raises shows the error; one that takes too long is cut off, and the
    // request still comes back.
    assert.match(vars.bad.value, /ValueError: no repr for you/);
    assert.match(vars.slow.value, /<repr\(\) of SlowRepr took longer than [\d.]+ s>/);

    // Tensors by duck typing: a summary, paged slices, no data read; modules in groups.
    assert.match(vars.tensor.value, /shape=\(1000, 1000, 3\)/);
    assert.match(vars.tensor.value, /dtype=torch\.float32/);
    assert.match(vars.tensor.value, /device=cuda:0/);
    assert.match(vars.tensor.value, /requires_grad=False/);
    assert.equal(vars.tensor.indexedVariables, 1000);
    const rows = await kids(vars.tensor, { filter: 'indexed', start: 10, count: 5 });
    assert.equal(rows.length, 5);
    assert.match(rows[0].value, /shape=\(1000, 3\)/);
    const named = Object.fromEntries(pairs(await kids(vars.tensor, { filter: 'named' })));
    assert.ok('dtype' in named, JSON.stringify(named));
    assert.equal(vars.net.value, 'FakeModule(parameters=16 in 2 tensors, buffers=4 in 1 tensor, children=0)');
    const groups = Object.fromEntries((await kids(vars.net)).map((x) => [x.name, x]));
    assert.deepEqual(Object.keys(groups).sort(), ['buffers', 'children', 'parameters']);
    const params = Object.fromEntries(pairs(await kids(groups.parameters)));
    assert.match(params.weight, /shape=\(4, 3\)/);
    assert.match(params.bias, /shape=\(4,\)/);
    assert.deepEqual(Object.keys(Object.fromEntries(pairs(await kids(groups.buffers)))), ['running_mean']);
    // A module's parameters and buffers count recursively, listed by qualified name and paged.
    assert.equal(vars.stack.value, 'FakeStack(parameters=9601 in 1201 tensors (1 direct), buffers=2400 in 600 tensors (0 direct), children=600)');
    const stackGroups = Object.fromEntries((await kids(vars.stack)).map((x) => [x.name, x]));
    assert.equal(stackGroups.parameters.indexedVariables, 1201);
    assert.deepEqual(pairs(await kids(stackGroups.parameters, { filter: 'indexed', start: 1200, count: 1 })),
      [['599.bias', 'FakeTensor(shape=(4,), dtype=torch.float32, device=cuda:0, requires_grad=False)']]);
    const reads = await c.evaluateRequest({ expression: 'list(FakeTensor.data_reads)', frameId: frame, context: 'watch' });
    assert.equal(reads.body.result, '[]');

    // evaluate: hover, watch (with children), clipboard (the whole value), repl statements.
    assert.equal((await c.evaluateRequest({ expression: 'counter * 2', frameId: frame, context: 'hover' })).body.result, '20');
    const watch = await c.evaluateRequest({ expression: 'big', frameId: frame, context: 'watch' });
    assert.equal(watch.body.indexedVariables, 100000);
    assert.ok(watch.body.variablesReference > 0);
    const clip = await c.evaluateRequest({ expression: 'text', frameId: frame, context: 'clipboard' });
    assert.equal(clip.body.result.length, 3002);
    const repl = await c.evaluateRequest({ expression: 'counter = 41\ncounter += 1', frameId: frame, context: 'repl' });
    assert.equal(repl.body.result, '');
    assert.equal((await c.evaluateRequest({ expression: 'counter', frameId: frame, context: 'watch' })).body.result, '42');
    const err = await c.evaluateRequest({ expression: 'nope + 1', frameId: frame, context: 'watch' }).catch((e) => e);
    assert.match(String(err.message), /NameError/);

    // setVariable on a local and on a container element, setExpression on an attribute.
    const scopes = await c.scopesRequest({ frameId: frame });
    assert.deepEqual(scopes.body.scopes.map((x) => x.name), ['Locals', 'Globals']);
    const globals = (await c.variablesRequest({ variablesReference: scopes.body.scopes[1].variablesReference })).body.variables;
    assert.ok(globals.some((x) => x.name === 'Point'), 'Globals holds the module names');
    const loc = scopes.body.scopes.find((x) => x.name === 'Locals').variablesReference;
    assert.equal((await c.send('setVariable', { variablesReference: loc, name: 'counter', value: '7 * 6' })).body.value, '42');
    await c.send('setVariable', { variablesReference: vars.dq.variablesReference, name: '[0]', value: '5' });
    assert.equal((await c.send('setExpression', { expression: 'pt.x', value: '99', frameId: frame })).body.value, '99');
    // completions: attributes after a dot, names in scope.
    const dot = (await c.send('completions', { text: 'pt.', column: 4, frameId: frame })).body.targets.map((x) => x.label);
    assert.ok(['x', 'y', 'dims'].every((n) => dot.includes(n)), dot.join(','));
    const word = (await c.send('completions', { text: 'cou', column: 4, frameId: frame })).body.targets.map((x) => x.label);
    assert.ok(word.includes('counter'), word.join(','));

    // The program runs with what was set.
    const s = c.waitForEvent('stopped', 30000);
    await c.nextRequest({ threadId: tid });
    await s;
    const f2 = await topFrame(c, tid);
    assert.equal(f2.line, lineOf(program, 'after'));
    assert.equal((await c.evaluateRequest({ expression: '(counter, pt.x, dq[0])', frameId: f2.id, context: 'watch' })).body.result, '(42, 99, 5)');
    await c.setBreakpointsRequest({ source: { path: program }, breakpoints: [] });
    const term = c.waitForEvent('terminated', 30000);
    await c.continueRequest({ threadId: tid });
    await term;
    assert.match(c.output('stdout'), /counter is 42\n/);
    await c.disconnectRequest();
    assertClean(assert, c);
  });
}, { tracing: true });
