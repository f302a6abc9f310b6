/**
 * A genesis file read as a stream (issue 10): one pass checks that it is JSON and
 * lists its top-level sections, then each section is streamed entry by entry when
 * the import asks for it. Nothing holds more than one entry of the file at a time.
 */
import { createReadStream } from 'node:fs';
import { type Duplex, pipeline } from 'node:stream';
import parser from 'stream-json/parser.js';
import pick from 'stream-json/filters/pick.js';
import streamArray from 'stream-json/streamers/stream-array.js';
import { Refused, refuse } from '../src/errors.js';
import { type GenesisSource, genesisSections } from '../src/book/genesis.js';
import { StartupFailure, exitCodes, fsReason } from './failures.js';

const documentError = (message: string): never => refuse('ERR-MalformedCommand', `genesis document: ${message}`);

// pipeline() tears every stage down on an error and hands it to the reader of the last.
const ignore = () => {};
const tokens = (path: string, ...stages: Duplex[]): Duplex => pipeline(createReadStream(path), parser.asStream({ streamValues: false }), ...stages, ignore) as unknown as Duplex;

/** The file's sections, each an array; stops at the first name that is not a section. */
async function readSections(path: string): Promise<string[]> {
  const found: string[] = [];
  let depth = 0;
  let expectSection: string | null = null;
  try {
    for await (const token of tokens(path) as AsyncIterable<{ name: string; value?: unknown }>) {
      if (depth === 0 && token.name !== 'startObject') documentError('must be an object');
      if (expectSection !== null) {
        if (token.name !== 'startArray') refuse('ERR-MalformedCommand', `genesis ${expectSection}: must be an array`);
        expectSection = null;
      }
      if (depth === 1 && token.name === 'keyValue') {
        const name = String(token.value);
        found.push(name);
        if (!(genesisSections as readonly string[]).includes(name)) return found;
        expectSection = name;
      }
      if (token.name === 'startObject' || token.name === 'startArray') depth++;
      else if (token.name === 'endObject' || token.name === 'endArray') depth--;
    }
  } catch (error) {
    if (error instanceof Refused) throw error;
    if (error instanceof Error && 'code' in error) throw new StartupFailure(`cannot read genesis file ${path}: ${fsReason(error)}`, exitCodes.config);
    documentError(`is not JSON (${error instanceof Error ? error.message : String(error)})`);
    throw error;
  }
  if (depth !== 0) documentError('is not JSON (ends early)');
  return found;
}

export function genesisFile(path: string): GenesisSource {
  return {
    sections: () => readSections(path),
    entries: async function* (section) {
      const items = tokens(path, pick.asStream({ filter: section, once: true }), streamArray.asStream());
      for await (const item of items as AsyncIterable<{ value: unknown }>) yield item.value;
    },
  };
}
