// The VS Code workbench as a user drives it, through playwright-core: the keyboard for files,
// lines, breakpoints and commands; what the views show (Call Stack, Variables, Debug Console,
// the editor's tab, cursor and current-statement line) read back from the page.
import fs from 'node:fs';
import path from 'node:path';

export class Workbench {
  constructor(page, artifacts) {
    this.page = page;
    this.artifacts = artifacts;
    this.shots = 0;
  }

  // A screenshot kept as a test artefact, numbered in the order taken.
  async shot(name) {
    fs.mkdirSync(this.artifacts, { recursive: true });
    const file = path.join(this.artifacts, `${String(++this.shots).padStart(2, '0')}-${name}.png`);
    await this.page.screenshot({ path: file });
    return file;
  }

  async open(url, folder) {
    await this.page.goto(`${url}/?folder=${encodeURIComponent(folder)}`);
    await this.page.locator('.monaco-workbench').waitFor({ timeout: 120_000 });
    await this.page.locator('.explorer-folders-view .monaco-list-row').first().waitFor({ timeout: 120_000 });
  }

  async explorerNames() {
    return this.page.locator('.explorer-folders-view .monaco-list-row .label-name').allInnerTexts();
  }

  // Opens the quick input with `key`, types `text`, waits for a row holding `row`, picks it.
  // A row that does not show (commands of extensions the window has not registered yet) is
  // looked for again, with the input reopened, for up to a minute.
  async quick(key, text, { row, staysOpen = false } = {}) {
    const widget = this.page.locator('.quick-input-widget');
    const deadline = Date.now() + 60_000;
    for (;;) {
      await this.page.keyboard.press(key);
      await widget.waitFor({ state: 'visible' });
      await this.page.keyboard.type(text);
      if (!row) break;
      // The focused row is the one Enter picks (the list reorders as the text is typed).
      const found = this.page.locator('.quick-input-list .monaco-list-row.focused', { hasText: row }).first();
      if (await found.waitFor({ timeout: 5000 }).then(() => true, () => false)) break;
      if (Date.now() > deadline) throw new Error(`'${text}' offers no '${row}' in the quick input`);
      await this.page.keyboard.press('Escape');
      await widget.waitFor({ state: 'hidden' });
    }
    await this.page.keyboard.press('Enter');
    if (staysOpen) return;
    // An Enter that comes before the input has taken in the typed text is lost: once more.
    for (let i = 0; !(await widget.waitFor({ state: 'hidden', timeout: 3000 }).then(() => true, () => false)); ++i) {
      if (i === 3) throw new Error(`the quick input for '${text}' stays open: ${await widget.innerText()}`);
      await this.page.keyboard.press('Enter');
    }
  }

  // In the open quick pick: types `text`, picks the row holding it. `staysOpen`: what was
  // picked opens a quick pick of its own (the process picker).
  async pick(text, { staysOpen = false } = {}) {
    await this.page.keyboard.type(text);
    await this.page.locator('.quick-input-list .monaco-list-row.focused', { hasText: text }).first().waitFor();
    await this.page.keyboard.press('Enter');
    if (!staysOpen) await this.page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
  }

  // `file` typed into VS Code's file dialog (a quick input in the browser), then Enter once the
  // dialog has caught up: it checks the path as it is typed, and an Enter before that answers
  // "Please select a file".
  async acceptFileDialog(file) {
    const widget = this.page.locator('.quick-input-widget');
    const input = widget.locator('input');
    // The dialog fills in its folder a moment after it opens, and may do it again: the path
    // is typed over whatever it shows until the input holds exactly that path.
    await this.page.waitForFunction(() => document.querySelector('.quick-input-widget input')?.value.endsWith('/'));
    for (let i = 0; ; ++i) {
      await input.press('Control+A');
      await this.page.keyboard.type(file);
      await this.page.waitForTimeout(300);
      if (await input.inputValue() === file) break;
      if (i === 5) throw new Error(`the file dialog's input holds ${await input.inputValue()}, not ${file}`);
    }
    for (let i = 0; i < 10; ++i) {
      await this.page.waitForTimeout(300);
      await this.page.keyboard.press('Enter');
      if (await widget.waitFor({ state: 'hidden', timeout: 2000 }).then(() => true, () => false)) return;
    }
    throw new Error(`the file dialog did not accept the path: ${await widget.innerText()}`);
  }

  // F1, a command by its title.
  async command(title, options = {}) {
    await this.quick('F1', title, { row: title, ...options });
  }

  // The open quick pick's rows, once one holding `row` shows.
  async quickRows(row) {
    await this.page.locator('.quick-input-list .monaco-list-row', { hasText: row }).first().waitFor();
    return this.page.locator('.quick-input-list .monaco-list-row').allInnerTexts();
  }

  async openFile(name) {
    await this.quick('Control+P', name, { row: name });
    await this.activeTab(name);
  }

  async activeTab(name, timeout = 30_000) {
    await this.page.locator('.tabs-container .tab.active', { hasText: name }).waitFor({ timeout });
  }

  // Ctrl+G LINE, checked in the status bar's "Ln L, Col C".
  async gotoLine(line) {
    await this.quick('Control+G', String(line));
    await this.waitForCursorLine(line);
  }

  async cursor() {
    const text = await this.page.locator('.statusbar-item[id="status.editor.selection"]').innerText();
    const m = text.match(/Ln (\d+), Col (\d+)/);
    return m ? { line: Number(m[1]), column: Number(m[2]) } : null;
  }

  async waitForCursorLine(line, timeout = 30_000) {
    const deadline = Date.now() + timeout;
    for (;;) {
      const c = await this.cursor().catch(() => null);
      if (c?.line === line) return c;
      if (Date.now() > deadline) throw new Error(`the cursor is at ${JSON.stringify(c)}, not on line ${line}`);
      await this.page.waitForTimeout(100);
    }
  }

  // Lines of the active editor whose margin shows one of `classes` (glyphs are positioned
  // widgets: matched to the line number drawn at the same height).
  async marginLines(classes) {
    return this.page.locator('.editor-group-container.active .monaco-editor').first().evaluate((ed, cls) => {
      const numbers = [...ed.querySelectorAll('.margin-view-overlays .line-numbers')]
        .map((n) => [n.getBoundingClientRect().top, Number(n.textContent)]);
      const lines = [];
      for (const g of ed.querySelectorAll('.glyph-margin-widgets > div, .view-overlays > div > div')) {
        if (!cls.some((c) => g.classList.contains(c))) continue;
        const top = g.getBoundingClientRect().top;
        const hit = numbers.find(([t]) => Math.abs(t - top) < 2);
        if (hit) lines.push(hit[1]);
      }
      return [...new Set(lines)].sort((x, y) => x - y);
    }, classes);
  }

  // The red dots: enabled breakpoints, placed or not yet.
  async breakpointLines() {
    return this.marginLines(['codicon-debug-breakpoint', 'codicon-debug-breakpoint-unverified',
      'codicon-debug-breakpoint-stackframe']);
  }

  // F9 on `line`, checked by the glyph the editor draws there (added or removed).
  async toggleBreakpoint(line) {
    await this.gotoLine(line);
    const had = (await this.breakpointLines()).includes(line);
    await this.page.keyboard.press('F9');
    const deadline = Date.now() + 10_000;
    while ((await this.breakpointLines()).includes(line) === had) {
      if (Date.now() > deadline) throw new Error(`F9 on line ${line} did not ${had ? 'remove' : 'add'} a breakpoint glyph`);
      await this.page.waitForTimeout(100);
    }
  }

  // Call Stack view rows as VS Code labels them for screen readers:
  // [{name, line, file}] from "Stack Frame NAME, line N, FILE".
  async callStack() {
    const labels = await this.page.locator('.debug-call-stack .monaco-list-row').evaluateAll(
      (rows) => rows.map((r) => r.getAttribute('aria-label') ?? ''));
    return labels.map((l) => l.match(/^Stack Frame (.*), line (\d+), (.*)$/)).filter(Boolean)
      .map((m) => ({ name: m[1], line: Number(m[2]), file: m[3] }));
  }

  // Waits until the Call Stack's frames satisfy `until`.
  async waitForFrames(until, timeout = 30_000) {
    const deadline = Date.now() + timeout;
    for (;;) {
      const frames = await this.callStack();
      if (until(frames)) return frames;
      if (Date.now() > deadline) throw new Error(`the Call Stack shows ${JSON.stringify(frames)}`);
      await this.page.waitForTimeout(200);
    }
  }

  // Waits until the top frame of the Call Stack is `name` at `line`, with at least `depth`
  // frames shown (VS Code asks for the top frame first and the rest after).
  async waitForTopFrame(name, line, { depth = 1, timeout = 120_000 } = {}) {
    const deadline = Date.now() + timeout;
    for (;;) {
      const frames = await this.callStack();
      if (frames[0]?.name === name && (line === undefined || frames[0].line === line) && frames.length >= depth) return frames;
      if (Date.now() > deadline) {
        throw new Error(`the Call Stack shows ${JSON.stringify(frames)}, not ${name}${line ? `:${line}` : ''} on top`);
      }
      await this.page.waitForTimeout(200);
    }
  }

  // The Variables view: scope SCOPE expanded (a click, as a user would), then its variables as
  // {name: value} from the rows' "NAME, value VALUE" labels.
  // With `until`, read again until it holds (the view refreshes a moment after a stop).
  async variables(scope = 'Locals', until = null, timeout = 30_000) {
    const deadline = Date.now() + timeout;
    let last = null;
    for (;;) {
      // Two reads alike in a row: the view redraws its rows one by one after a stop. Right
      // after a stop the view may still show the frame focused before (one without the scope,
      // such as a library frame with no debug info): read again until the deadline.
      const vars = await this.readVariables(scope).catch((e) => {
        if (Date.now() > deadline) throw e;
        return null;
      });
      if (vars === null) {
        last = null;
        continue;
      }
      const same = last !== null && JSON.stringify(vars) === JSON.stringify(last);
      if (same && (!until || until(vars))) return vars;
      last = vars;
      if (Date.now() > deadline) throw new Error(`the Variables view's ${scope} never matched: ${JSON.stringify(vars)}`);
      await this.page.waitForTimeout(150);
    }
  }

  async readVariables(scope) {
    const row = this.page.locator('.debug-variables .monaco-list-row', { hasText: scope }).first();
    await row.waitFor({ timeout: 5000 });
    if ((await row.getAttribute('aria-expanded')) === 'false') await row.click();
    await this.page.waitForFunction((s) => {
      const rows = [...document.querySelectorAll('.debug-variables .monaco-list-row')];
      const i = rows.findIndex((r) => r.getAttribute('aria-label') === `Scope ${s}`);
      return i >= 0 && rows[i].getAttribute('aria-expanded') === 'true' && rows[i + 1] &&
        !rows[i + 1].getAttribute('aria-label')?.startsWith('Scope ');
    }, scope, { timeout: 5000 });
    const labels = await this.page.locator('.debug-variables .monaco-list-row').evaluateAll(
      (rows) => rows.map((r) => [r.getAttribute('aria-label') ?? '', r.getAttribute('aria-level')]));
    const out = {};
    let inside = false;
    for (const [label, level] of labels) {
      if (label.startsWith('Scope ')) { inside = label === `Scope ${scope}`; continue; }
      const m = label.match(/^(.*?), value (.*)$/s);
      if (inside && m && level === '2') out[m[1]] = m[2];
    }
    return out;
  }

  // The debug toolbar is there while a session runs.
  async sessionRunning() {
    return this.page.locator('.debug-toolbar').isVisible();
  }

  // Leaves no session running and no breakpoint set, whatever an earlier step left.
  async reset() {
    if (await this.sessionRunning()) {
      await this.page.keyboard.press('Shift+F5');
      await this.waitForSessionEnd(30_000);
    }
    // Offered only while there are breakpoints.
    const widget = this.page.locator('.quick-input-widget');
    await this.page.keyboard.press('F1');
    await widget.waitFor({ state: 'visible' });
    await this.page.keyboard.type('Debug: Remove All Breakpoints');
    const row = this.page.locator('.quick-input-list .monaco-list-row', { hasText: 'Remove All Breakpoints' }).first();
    const offered = await row.waitFor({ timeout: 3000 }).then(() => true, () => false);
    await this.page.keyboard.press(offered ? 'Enter' : 'Escape');
    await widget.waitFor({ state: 'hidden' });
  }

  async waitForSessionEnd(timeout = 120_000) {
    await this.page.locator('.debug-toolbar').waitFor({ state: 'hidden', timeout });
  }

  async debugConsole() {
    return (await this.page.locator('.repl .monaco-list-rows').allInnerTexts()).join('\n');
  }

  async waitForDebugConsole(re, timeout = 60_000) {
    const deadline = Date.now() + timeout;
    for (;;) {
      const text = await this.debugConsole();
      if (re.test(text)) return text;
      if (Date.now() > deadline) throw new Error(`the Debug Console never showed ${re}; it shows:\n${text}`);
      await this.page.waitForTimeout(200);
    }
  }

  // The line of the editor's current-statement highlight (the yellow line of a stopped frame).
  async currentStatementLine() {
    const lines = await this.marginLines(['debug-top-stack-frame-line']);
    return lines.length === 1 ? lines[0] : lines;
  }

  // The webview in the active editor (VS Code nests the content in a second iframe).
  webview() {
    return this.page.frameLocator('iframe.webview.ready').last().frameLocator('#active-frame');
  }

  // The point of the canvas where the page's tooltip names `name` (page coordinates), or null.
  // Looked for with pointer events dispatched inside the page (thousands of real mouse moves
  // take tens of seconds), then confirmed with a real mouse move there.
  async findOnCanvas(view, canvasSel, tooltipSel, name, { dx = 2, dy = 3 } = {}) {
    const canvas = view.locator(canvasSel);
    const found = await canvas.evaluate((c, [tipSel, want, sx, sy]) => {
      const tip = document.querySelector(tipSel);
      const r = c.getBoundingClientRect();
      for (let x = 1; x < r.width; x += sx) {
        for (let y = 1; y < r.height; y += sy) {
          c.dispatchEvent(new PointerEvent('pointermove', { clientX: r.left + x, clientY: r.top + y, bubbles: true }));
          if (!tip.hidden && tip.querySelector('strong')?.textContent === want) return { x, y };
        }
      }
      return null;
    }, [tooltipSel, name, dx, dy]);
    if (!found) return null;
    const box = await canvas.boundingBox();
    const at = { x: box.x + found.x, y: box.y + found.y };
    await this.page.mouse.move(at.x, at.y);
    const tip = view.locator(tooltipSel);
    await tip.locator('strong', { hasText: name }).waitFor();
    return at;
  }

  // The notifications' messages (errors the extension shows land there).
  async notifications() {
    return this.page.locator('.notifications-toasts .notification-list-item-message').allInnerTexts();
  }

  // The first notification whose message matches `re`.
  async waitForNotification(re, timeout = 30_000) {
    const deadline = Date.now() + timeout;
    for (;;) {
      const found = (await this.notifications()).find((n) => re.test(n));
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no notification says ${re}; they say: ${JSON.stringify(await this.notifications())}`);
      await this.page.waitForTimeout(100);
    }
  }

  async clearNotifications() {
    await this.command('Notifications: Clear All Notifications');
  }

  // Every editor closed, the GPU panels too: the next case starts from one empty group.
  async closeAllEditors() {
    await this.command('View: Close All Editor Groups');
    await this.page.locator('.tabs-container .tab').first().waitFor({ state: 'detached' });
  }

  // A tab of any editor group, active or not.
  tab(name) {
    return this.page.locator('.tabs-container .tab', { hasText: name }).first();
  }

  // Debug: Select and Start Debugging, launch.json's configuration `name`; waits until that
  // configuration is offered (a launch.json written a moment ago is read again first).
  async startConfiguration(name, { staysOpen = false, timeout = 30_000 } = {}) {
    const deadline = Date.now() + timeout;
    for (;;) {
      await this.command('Debug: Select and Start Debugging', { staysOpen: true });
      const row = this.page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first();
      if (await row.waitFor({ timeout: 5000 }).then(() => true, () => false)) break;
      if (Date.now() > deadline) throw new Error(`Select and Start Debugging does not offer ${name}`);
      await this.page.keyboard.press('Escape');
      await this.page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
    }
    await this.pick(name, { staysOpen });
  }

  // Pause (F6) until the Call Stack shows frames: a session just attached may not yet take it.
  async pauseUntilFrames(timeout = 60_000) {
    const deadline = Date.now() + timeout;
    // The Call Stack is read from the Run and Debug view: shown first if another view is.
    if (!(await this.page.locator('.debug-call-stack').isVisible())) await this.page.keyboard.press('Control+Shift+D');
    for (;;) {
      await this.page.keyboard.press('F6');
      const until = Date.now() + 3000;
      while (Date.now() < until) {
        const frames = await this.callStack();
        if (frames.length) return frames;
        await this.page.waitForTimeout(100);
      }
      if (Date.now() > deadline) throw new Error('F6 (pause) never stopped the session: the Call Stack shows no frame');
    }
  }
}
