import type http from 'node:http';
import type { SessionLibrary } from '../sessionView/sessionLibrary.js';
import type { SessionJsonPart } from '../sessions/sessionReading.js';
import type { SessionStore } from '../sessions/sessionStore.js';
import type { SessionViewResponse } from './apiPayloads.js';
import { endResponse, HttpError, JSON_TYPE, sendJson, writeChunk, writeHead } from './httpResponses.js';
import type { SessionFilter } from '../sessions/sessionFilter.js';
import { jsonArrayPieces } from '../text/jsonBytes.js';
import { isLoopRunning } from '../sessions/loopLiveness.js';

/**
 * The session routes. Lists and whole sessions are streamed a piece at a time, with
 * back-pressure: a session of hundreds of megabytes is never one string in memory,
 * and a client that goes away stops the reading.
 */

/** Summaries per write while streaming a list. */
const SUMMARIES_PER_CHUNK = 250;

export interface SessionRoutesContext {
  store: SessionStore;
  library: SessionLibrary;
}

/** `GET /api/sessions`: summaries, newest first. */
export async function listSessions(
  context: SessionRoutesContext,
  request: http.IncomingMessage,
  response: http.ServerResponse,
  filter: SessionFilter,
): Promise<void> {
  const summaries = await context.store.listSessions(filter);
  writeHead(response, 200, { 'Content-Type': JSON_TYPE });
  if (request.method === 'HEAD') return void response.end();
  // Each summary's bytes as the index keeps them, copied into the response: none decoded and encoded again.
  for (const piece of jsonArrayPieces(
    summaries.map((session) => session.summaryBytes),
    SUMMARIES_PER_CHUNK,
  ))
    await writeChunk(response, piece);
  await endResponse(response);
}

/** `GET /api/stats`. */
export async function sessionStats(
  context: SessionRoutesContext,
  request: http.IncomingMessage,
  response: http.ServerResponse,
  filter: SessionFilter,
): Promise<void> {
  sendJson(request, response, 200, await context.store.stats(filter));
}

/**
 * `GET /api/sessions/:id`: `{id, start, iterations, end, warnings}`, written line by
 * line as the file is read. Errors found before the first line (no such session, not
 * a session) are proper JSON errors; the status is sent only once the start is read.
 */
export async function sessionDocument(context: SessionRoutesContext, request: http.IncomingMessage, response: http.ServerResponse, id: string): Promise<void> {
  // Iterations as their own JSON text: a 50 MB line goes out as it was read, not parsed and written again.
  const parts = context.store.readAsJson(id);
  try {
    const warnings: string[] = [];
    let start: Extract<SessionJsonPart, { kind: 'start' }> | undefined;
    while (!start) {
      const next = await parts.next();
      if (next.done) throw new HttpError(500, `Session ${id} ended before its start line.`);
      if (next.value.kind === 'warning') warnings.push(next.value.message);
      else if (next.value.kind === 'start') start = next.value;
    }
    writeHead(response, 200, { 'Content-Type': JSON_TYPE });
    if (request.method === 'HEAD') return void response.end();
    await writeChunk(response, `{"id":${JSON.stringify(id)},"start":${JSON.stringify(start.line)},"iterations":[`);
    let end: unknown = null;
    let count = 0;
    for await (const part of parts) {
      if (part.kind === 'iteration') {
        if (count++ > 0) await writeChunk(response, ',');
        for await (const piece of part.json) await writeChunk(response, piece);
      } else if (part.kind === 'end') end = part.line;
      else if (part.kind === 'warning') warnings.push(part.message);
    }
    await writeChunk(response, `],"end":${JSON.stringify(end)},"warnings":${JSON.stringify(warnings)}}`);
    await endResponse(response);
  } finally {
    // Closes the file whether we finished, failed or the client left.
    await parts.return(undefined);
  }
}

/**
 * `GET /api/sessions/:id/diff[?iteration=N]`: the recorded diff as plain text, byte for
 * byte, one iteration at a time (`codeloops sessions diff` also quotes names that hide
 * characters, for a terminal; a client here gets what was recorded).
 */
export async function sessionDiff(
  context: SessionRoutesContext,
  request: http.IncomingMessage,
  response: http.ServerResponse,
  id: string,
  iteration: number | undefined,
): Promise<void> {
  const parts = context.store.recordedDiffParts(id, iteration);
  try {
    // The first piece (or the end) decides the status: an unknown iteration is a 404, not a cut stream.
    const first = await parts.next();
    writeHead(response, 200, { 'Content-Type': 'text/plain; charset=utf-8' });
    if (request.method === 'HEAD') return void response.end();
    if (!first.done) {
      await writeChunk(response, first.value);
      for await (const part of parts) await writeChunk(response, part);
    }
    await endResponse(response);
  } finally {
    await parts.return(undefined);
  }
}

/** `GET /api/sessions/:id/view`: what the editor's viewer gets, and whether the loop runs now. */
export async function sessionView(context: SessionRoutesContext, request: http.IncomingMessage, response: http.ServerResponse, id: string): Promise<void> {
  const view = await context.library.view(id);
  const running = view.end === null && isLoopRunning({ working_dir: view.start.working_dir, timestamp: view.start.timestamp });
  sendJson(request, response, 200, { view, running } satisfies SessionViewResponse);
}

/** `GET /api/sessions/:id/iterations/:n`: one iteration's outputs, diff and the critic's answer. */
export async function iterationDetail(
  context: SessionRoutesContext,
  request: http.IncomingMessage,
  response: http.ServerResponse,
  id: string,
  rawNumber: string,
): Promise<void> {
  if (!/^[1-9]\d{0,8}$/.test(rawNumber)) throw new HttpError(400, `${JSON.stringify(rawNumber.slice(0, 40))} is not an iteration number (1, 2, …).`);
  const number = Number(rawNumber);
  // In pieces as the file is read: an output of megabytes is never whole in the server's memory.
  const detail = await context.library.detailJson(id, number);
  if (!detail) {
    const view = await context.library.view(id);
    const known = view.iterations.map((iteration) => iteration.iteration_number).join(', ') || 'none';
    throw new HttpError(404, `Session ${id} has no iteration ${number} (iterations: ${known}).`);
  }
  const pieces = detail[Symbol.asyncIterator]();
  try {
    // Started before anything is sent: from here on, returning it closes the file.
    let next = await pieces.next();
    writeHead(response, 200, { 'Content-Type': JSON_TYPE });
    if (request.method === 'HEAD') return void response.end();
    for (; !next.done; next = await pieces.next()) await writeChunk(response, next.value);
    await endResponse(response);
  } finally {
    // Closes the file whether we finished, failed or the client left.
    await pieces.return?.();
  }
}
