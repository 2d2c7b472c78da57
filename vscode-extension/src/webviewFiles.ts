// The GPU timeline webview's files as the panel loads them (webview/: the page, its style and
// its scripts in the page's order), and the requests the webview may make: what the panel host
// needs that VS Code does not.
import fs from 'node:fs';
import path from 'node:path';

export const WEBVIEW_PAGE = 'timeline.html';
export const WEBVIEW_SCRIPTS = ['timeline-view.js', 'timeline-draw.js', 'timeline-panes.js', 'timeline.js'];
export const WEBVIEW_FILES = [WEBVIEW_PAGE, 'timeline.css', ...WEBVIEW_SCRIPTS];
// The webview may ask for these and nothing else (no evaluate, no gpuStart).
export const FORWARDED = new Set(['gpuTimeline', 'gpuSummary', 'gpuKernel', 'gpuExport']);

export function missingWebviewFiles(extensionPath: string): string[] {
  return WEBVIEW_FILES.filter((f) => !fs.existsSync(path.join(extensionPath, 'webview', f)));
}

export function fillTemplate(html: string, values: Record<string, string>): string {
  return html.replace(/\{\{(\w+)\}\}/g, (whole, key: string) => (key in values ? values[key] : whole));
}

