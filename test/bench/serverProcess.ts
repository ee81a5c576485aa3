/**
 * Servers as processes of their own, for the benchmarks of `codeloops ui`'s memory
 * (slowClient, slowClients, bigLine): the server's resident memory read from /proc, and
 * clients that stop reading.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http, { type ClientRequest } from 'node:http';
import path from 'node:path';
import { CODELOOPS_CLI } from './benchmark.js';

export interface ServerProcess {
  pid: number;
  port: number;
  rssMb(): number;
  stop(): void;
}

/** `codeloops ui` with its data (and config) home next to the fixture's sessions. */
export function startCodeloopsUi(dataHome: string): Promise<ServerProcess> {
  const env = { ...process.env, XDG_DATA_HOME: dataHome, XDG_CONFIG_HOME: path.join(dataHome, '..', 'config') };
  return startServerProcess([CODELOOPS_CLI, 'ui', '--no-open', '--port', '0'], env);
}

/** What a server that reads a session whole for each request does (what `codeloops ui` did before it streamed). */
const WHOLE_FILE_SERVER = `
const fs = require('fs'), http = require('http');
const file = process.argv[1];
http.createServer((request, response) => fs.readFile(file, (error, data) => response.end(data))).listen(0, '127.0.0.1', function () {
  process.stdout.write('http://127.0.0.1:' + this.address().port + '/\\n');
});
`;

/** The baseline server: every request answered with the whole file, read into one buffer. */
export function startWholeFileServer(file: string): Promise<ServerProcess> {
  return startServerProcess(['-e', WHOLE_FILE_SERVER, file], process.env);
}

async function startServerProcess(args: string[], env: NodeJS.ProcessEnv): Promise<ServerProcess> {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'ignore'] });
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      const match = /(http:\/\/127\.0\.0\.1:\d+\/)\n/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.on('exit', () => reject(new Error(`the server exited: ${output}`)));
  });
  const pid = child.pid!;
  return {
    pid,
    port: Number(new URL(url).port),
    rssMb: () => Number(/^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024,
    stop: () => child.kill('SIGKILL'),
  };
}

/** The server's resident memory once warmed up by a listing, as a server that has shown its page is. */
export async function idleRss(server: ServerProcess): Promise<number> {
  await new Promise<void>((resolve, reject) =>
    http
      .get({ host: '127.0.0.1', port: server.port, path: '/api/sessions', headers: { host: `127.0.0.1:${server.port}` }, agent: false }, (response) => {
        response.resume();
        response.on('end', resolve);
      })
      .on('error', reject),
  );
  return server.rssMb();
}

/**
 * Opens clients that read the first piece of a session and then stop reading, and
 * waits until the server's memory stops growing (it has filled their buffers and
 * waits, or has read the whole file for each). Returns the server's RSS then.
 */
export async function withSlowClients(server: ServerProcess, route: string, count: number): Promise<{ rssMb: number; close(): void }> {
  const requests: ClientRequest[] = [];
  for (let index = 0; index < count; index++) {
    await new Promise<void>((resolve, reject) => {
      const request = http.get(
        { host: '127.0.0.1', port: server.port, path: route, headers: { host: `127.0.0.1:${server.port}` }, agent: false },
        (response) => {
          response.once('data', () => {
            response.pause();
            resolve();
          });
        },
      );
      request.on('error', reject);
      requests.push(request);
    });
  }
  let previous = -1;
  for (let steady = 0; steady < 10;) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const now = server.rssMb();
    steady = Math.abs(now - previous) < 1 ? steady + 1 : 0;
    previous = now;
  }
  return { rssMb: server.rssMb(), close: () => requests.forEach((request) => request.destroy()) };
}
