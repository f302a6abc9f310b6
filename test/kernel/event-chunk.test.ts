/**
 * Store layout 5's event chunk and operation pointer (src/model/event-chunk.ts): each
 * operation's text sliced out of a chunk exactly as written (text outside ASCII too), a chunk
 * bounded by eventChunkEventsMax, and a chunk or pointer of another shape refused as damage.
 */
import { describe, expect, it } from 'vitest';
import { eventChunkEventsMax } from '../../src/constants.js';
import { DamagedRecord } from '../../src/model/decode.js';
import { decodeOperationPointer, encodeEventChunk, encodeOperationPointer, eventChunkLength, eventChunkText, eventChunkTexts } from '../../src/model/event-chunk.js';

const texts = ['{"ref":"a","memo":"café ☕ 𝄞"}', '{"ref":"b"}', '{"ref":"c","memo":"#[,]"}'];

describe('event chunks', () => {
  it('gives back each operation text alone, byte for byte, and all of them in order', () => {
    const chunk = encodeEventChunk(texts);
    expect(chunk.startsWith('#')).toBe(true);
    expect(eventChunkLength(chunk)).toBe(3);
    for (const [i, text] of texts.entries()) expect(eventChunkText(chunk, i)).toBe(text);
    expect(eventChunkTexts(chunk)).toEqual(texts);
  });

  it('holds 1 to eventChunkEventsMax events', () => {
    expect(() => encodeEventChunk([])).toThrow(RangeError);
    expect(eventChunkLength(encodeEventChunk(Array.from({ length: eventChunkEventsMax }, () => '{}')))).toBe(eventChunkEventsMax);
    expect(() => encodeEventChunk(Array.from({ length: eventChunkEventsMax + 1 }, () => '{}'))).toThrow(RangeError);
  });

  it('refuses as damage a layout-4 list, a cut header, offsets past its end, and an index it does not hold', () => {
    const chunk = encodeEventChunk(texts);
    expect(() => eventChunkLength(`[${texts.join(',')}]`)).toThrow(DamagedRecord);
    expect(() => eventChunkText(chunk.slice(0, 12), 2)).toThrow(DamagedRecord);
    expect(() => eventChunkText(chunk.slice(0, -5), 2)).toThrow(DamagedRecord);
    expect(() => eventChunkText(chunk, 3)).toThrow(DamagedRecord);
    expect(() => eventChunkText(chunk, -1)).toThrow(DamagedRecord);
    expect(() => eventChunkLength('#0000')).toThrow(DamagedRecord);
  });
});

describe('operation pointers', () => {
  it('round-trips, and reads a whole operation (a record kept from layout 4) as none', () => {
    expect(encodeOperationPointer({ chunk: 1_234_567, index: 15 })).toBe('1234567/15');
    expect(decodeOperationPointer('1234567/15')).toEqual({ chunk: 1_234_567, index: 15 });
    expect(decodeOperationPointer('{"ref":"a"}')).toBeNull();
  });

  it('refuses as damage any other text', () => {
    for (const bad of ['', '0/0', '12', '12/', '/3', '012/1', '1/01', '1/-1', '99999999999999999/0', '1/2/3', ' 1/2']) expect(() => decodeOperationPointer(bad), bad).toThrow(DamagedRecord);
  });
});
