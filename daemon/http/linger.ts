/**
 * Lingering close, as nginx and Apache do it. A reply sent before the request's body was read
 * closes the connection; but a socket closed with unread bytes makes the kernel send a reset,
 * which can reach the client before it has read the reply (it sees "fetch failed"). So once the
 * reply is written the daemon half-closes (its FIN follows the reply), then reads and discards
 * what the client still sends until the client closes, lingerBytesMax bytes have come, or
 * lingerMs has passed, and only then closes.
 */
import type { Socket } from 'node:net';
import { lingerBytesMax, lingerCheckMs, lingerMs } from '../constants.js';

const lingering = new WeakSet<Socket>();

/** Makes the close Node's HTTP server does after this socket's `connection: close` reply a lingering one. */
export function lingerOnClose(socket: Socket): void {
  if (lingering.has(socket)) return;
  lingering.add(socket);
  // Node's server calls destroySoon() once a reply it will not keep the connection open after is written.
  socket.destroySoon = () => {
    const readBefore = socket.bytesRead;
    socket.end();
    // What still arrives goes to the request's parser, which discards a dumped body; counted here.
    const counting = setInterval(() => {
      if (socket.bytesRead - readBefore > lingerBytesMax) socket.destroy();
    }, lingerCheckMs);
    const deadline = setTimeout(() => socket.destroy(), lingerMs);
    socket.once('close', () => {
      clearInterval(counting);
      clearTimeout(deadline);
    });
    socket.resume();
  };
}
