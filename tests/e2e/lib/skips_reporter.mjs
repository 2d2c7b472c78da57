// A node:test reporter run beside `spec`: at the end it lists every skipped test with its
// reason (`STRATA-SKIP <test>: <reason>`, read by scripts/test_summary.py), and prints
// `STRATA-ALL-SKIPPED` when a file ran no test at all, so ctest reports that file as skipped
// (SKIP_REGULAR_EXPRESSION) instead of passed.
export default async function* skipsReporter(source) {
  const skips = [];
  let ran = 0;
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { name, skip, nesting } = event.data;
    // A test with subtests reports after them; only the leaves count.
    if (event.data.details?.type === 'suite') continue;
    if (skip !== undefined && skip !== false) skips.push(`${'  '.repeat(nesting)}${name}: ${skip === true ? '(no reason given)' : skip}`);
    else ran += 1;
  }
  for (const s of skips) yield `STRATA-SKIP ${s}\n`;
  if (skips.length > 0 && ran === 0) yield 'STRATA-ALL-SKIPPED\n';
}
