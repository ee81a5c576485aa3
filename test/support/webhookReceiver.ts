import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A body a webhook was sent: as it came, as JSON, and with its request's headers. */
export interface ReceivedBody {
  body: string;
  json: Record<string, unknown>;
  headers: http.IncomingHttpHeaders;
}

/** A webhook on 127.0.0.1 that keeps every body it is sent and answers as told (`hang`: never; `redirect`: a 307 to that address); its path stands for a token. */
export async function webhookReceiver(answer: number | 'hang' | { redirect: string } = 204) {
  const received: ReceivedBody[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      received.push({ body, json: JSON.parse(body) as Record<string, unknown>, headers: request.headers });
      if (typeof answer === 'object') response.writeHead(307, { location: answer.redirect }).end();
      else if (answer !== 'hang') response.writeHead(answer).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/secret-token`;
  return {
    url,
    received,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
