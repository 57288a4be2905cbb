// Refusing a WebSocket upgrade: the socket has no HTTP response object yet, so the answer is
// written by hand, with the same JSON error body a route would send.

import type { Duplex } from 'node:stream';
import { errorBody } from './gate.js';

const PHRASE: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found' };

export function rejectUpgrade(socket: Duplex, status: number, message: string): void {
  const body = JSON.stringify(errorBody(message));
  const auth = status === 401 ? 'WWW-Authenticate: Bearer\r\n' : '';
  socket.end(
    `HTTP/1.1 ${status} ${PHRASE[status] ?? 'Error'}\r\n${auth}Content-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
