import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { HttpError, writeHead } from './httpResponses.js';

/**
 * The browser page and its files. Only the names listed here are served, from the
 * bundle folder (`dist/webview`): no path from a request ever reaches the file system.
 */

const ASSET_TYPES: Readonly<Record<string, string>> = {
  'webview.js': 'text/javascript; charset=utf-8',
  'webview.js.map': 'application/json; charset=utf-8',
  'browser.css': 'text/css; charset=utf-8',
  'viewer.css': 'text/css; charset=utf-8',
  'stats.css': 'text/css; charset=utf-8',
  'codicon.css': 'text/css; charset=utf-8',
  'codicon.ttf': 'font/ttf',
  'codeloops.svg': 'image/svg+xml',
};

export type PageName = 'sessions' | 'session' | 'stats';

const PAGE_TITLES: Readonly<Record<PageName, string>> = { sessions: 'Sessions', session: 'Session', stats: 'Stats' };

/**
 * The page's policy: scripts, styles, fonts and images from this server only, no
 * inline script or style, requests to this server only, no plugins, no framing,
 * and DOM sinks that parse HTML refused outright (Trusted Types): agent text can
 * only ever become text.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "font-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  'trusted-types',
].join('; ');

export function sendPage(request: http.IncomingMessage, response: http.ServerResponse, page: PageName): void {
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Codeloops · ${PAGE_TITLES[page]}</title>
<link rel="icon" type="image/svg+xml" href="/assets/codeloops.svg">
<link rel="stylesheet" href="/assets/codicon.css">
<link rel="stylesheet" href="/assets/viewer.css">
<link rel="stylesheet" href="/assets/stats.css">
<link rel="stylesheet" href="/assets/browser.css">
</head>
<body data-page="${page}">
<div id="app"></div>
<script src="/assets/webview.js"></script>
</body>
</html>
`;
  writeHead(response, 200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': Buffer.byteLength(html), 'Content-Security-Policy': PAGE_CSP });
  response.end(request.method === 'HEAD' ? undefined : html);
}

export async function sendAsset(request: http.IncomingMessage, response: http.ServerResponse, assetsDirectory: string, name: string): Promise<void> {
  const type = Object.hasOwn(ASSET_TYPES, name) ? ASSET_TYPES[name] : undefined;
  if (!type) throw new HttpError(404, `No file ${JSON.stringify(name.slice(0, 120))} here.`);
  const file = path.join(assetsDirectory, name);
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  if (!stat?.isFile()) throw new HttpError(404, `${name} is missing from ${assetsDirectory}: run "npm run build".`);
  // Revalidated on each load: a rebuilt bundle is picked up without a hard reload.
  writeHead(response, 200, { 'Content-Type': type, 'Content-Length': stat.size, 'Cache-Control': 'no-cache' });
  if (request.method === 'HEAD') {
    response.end();
    return;
  }
  await pipeline(fs.createReadStream(file), response);
}
