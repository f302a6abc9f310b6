/**
 * Connections at shutdown. Node's server.close() waits for every connection to end, but closes
 * only those it counts idle (a keep-alive connection between requests). One that has sent no
 * request yet, or only part of one (a client's spare connection, a preconnect, a slow sender),
 * counts as active, and once the server closes it no longer checks headers timeouts: such a
 * connection held shutdown until the client let go, or past shutdownTimeoutMs (exit 1). So once
 * draining begins, every connection with no request in flight is closed, and every other one as
 * its last request in flight ends; requests in flight still finish (their replies close the connection).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { isLingering } from './linger.js';

export interface ShutdownConnections {
  /** Draining begins: connections with no request in flight close now, the others after their last. */
  close(): void;
}

export function shutdownConnections(server: Server): ShutdownConnections {
  /** Requests in flight (dispatched, not yet answered) per open connection. */
  const inFlight = new Map<Socket, number>();
  let closing = false;
  // After its writes are flushed; a lingering connection is closing already (http/linger.ts).
  const closeQuietly = (socket: Socket) => {
    if (!socket.destroyed && !isLingering(socket)) socket.destroySoon();
  };
  server.on('connection', (socket: Socket) => {
    if (closing) return void socket.destroy();
    inFlight.set(socket, 0);
    socket.once('close', () => inFlight.delete(socket));
  });
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    response.once('close', () => {
      const left = inFlight.get(socket);
      if (left === undefined) return;
      inFlight.set(socket, left - 1);
      if (closing && left === 1) closeQuietly(socket);
    });
  });
  return {
    close: () => {
      closing = true;
      for (const [socket, requests] of inFlight) if (requests === 0) closeQuietly(socket);
    },
  };
}
