/**
 * Lingering close, as nginx and Apache do it. A reply sent before the request's body was read
 * closes the connection; but a socket closed with unread bytes makes the kernel send a reset,
 * which can reach the client before it has read the reply (it sees "fetch failed"). So once the
 * reply is written the daemon half-closes (its FIN follows the reply), then reads and discards
 * what the client still sends (up to lingerBytesMax; past it, nothing more is read) until the
 * client closes or lingerMs has passed, and only then closes.
 */
import type { Socket } from 'node:net';
import { lingerBytesMax, lingerCheckMs, lingerMs } from '../constants.js';

const lingering = new WeakSet<Socket>();
/** Sockets half-closed and draining: what still arrives is no news (a parser error on it included). */
const closing = new WeakSet<Socket>();

/** Whether `socket` is draining before its close (lingerThenClose). */
export const isLingering = (socket: Socket): boolean => closing.has(socket);

/** Makes the close Node's HTTP server does after this socket's `connection: close` reply a lingering one. */
export function lingerOnClose(socket: Socket): void {
  if (lingering.has(socket)) return;
  lingering.add(socket);
  // Node's server calls destroySoon() once a reply it will not keep the connection open after is written.
  socket.destroySoon = () => lingerThenClose(socket);
}

/**
 * Half-closes `socket` after what was written to it, then reads and discards what still arrives
 * (at most lingerBytesMax, then no more is read) for at most lingerMs before closing it, so the client reads the reply
 * instead of a reset. Also for answers written below the HTTP server (a request that never
 * became one: replies.ts).
 */
export function lingerThenClose(socket: Socket): void {
  closing.add(socket);
  const readBefore = socket.bytesRead;
  socket.end();
  // What still arrives goes to the request's parser (which discards a dumped body), or nowhere once it is detached: counted here.
  // Past the bound it is no longer read (the client's sends then block, and it reads the reply); the deadline closes it.
  const counting = setInterval(() => {
    if (socket.bytesRead - readBefore > lingerBytesMax) {
      socket.pause();
      clearInterval(counting);
    }
  }, lingerCheckMs);
  const deadline = setTimeout(() => socket.destroy(), lingerMs);
  socket.once('close', () => {
    clearInterval(counting);
    clearTimeout(deadline);
  });
  socket.resume();
}
