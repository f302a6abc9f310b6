/** A server-sent-events parser (the WHATWG event-stream format), bounded in event size. */
import { eventBytesMax } from './limits.js';

export interface ServerEvent {
  id: string | null;
  event: string;
  data: string;
}

export async function* parseServerEvents(body: AsyncIterable<Uint8Array | string>, onComment: (text: string) => void = () => {}): AsyncGenerator<ServerEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  let event = '';
  let id: string | null = null;
  for await (const chunk of body) {
    buffer += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let newline = buffer.indexOf('\n');
    while (newline >= 0) {
      const line = buffer.slice(0, newline).replace(/\r$/, '');
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf('\n');
      if (line === '') {
        if (data.length > 0) yield { id, event: event || 'message', data: data.join('\n') };
        data = [];
        event = '';
        continue;
      }
      if (line.startsWith(':')) {
        onComment(line.slice(1).trim());
        continue;
      }
      const colon = line.indexOf(':');
      const name = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (name === 'data') data.push(value);
      else if (name === 'event') event = value;
      else if (name === 'id') id = value;
    }
    if (buffer.length + data.reduce((n, d) => n + d.length, 0) > eventBytesMax) throw new Error(`an event over ${eventBytesMax} bytes: the stream is broken`);
  }
}
