/**
 * The parts of `ledgerd check` that read records below the query layer, each against
 * evidence independent of the record itself (docs/operations.md, Backups):
 * - every record is in a space of the layout (a restore refuses others; a book may
 *   still hold one planted in its store);
 * - every credential belongs to a principal of the book, and every bearer token to a
 *   credential of the principal it names, with that credential's scheme: one API key per
 *   API-key credential, every session expiring and in the session expiry index;
 * - the data dir's daemon.key is the one the book's operation references were drawn under;
 * - the operations index names every operation and nothing else;
 * - the head's counters against the records they count (the journal's chunks run without
 *   a gap to its position, the event chunks to its last event) and the embedded
 *   settlement layer's chain against its meta and what the book took in from it. LevelDB
 *   replays a damaged write-ahead log past the damage, silently dropping what stood in it
 *   (its `paranoid_checks`, which would refuse to open, is not among classic-level's
 *   options: docs/operations.md), so what was dropped shows only as such a gap.
 */
import { builtInPrincipals } from '../src/auth/authority.js';
import { decodeCredential, decodeTokenGrant, type Credential } from '../src/auth/credentials.js';
import { decodeHead, journalChunkEntries } from '../src/model/codec.js';
import { operationIndexItem, operationIndexItemsOf } from '../src/queries/operation-index.js';
import { DamagedRecord } from '../src/model/decode.js';
import { eventChunkLength } from '../src/model/event-chunk.js';
import { decidedOfEntries, readOperations } from '../src/queries/operation-records.js';
import { commandChunkOperations } from '../src/book/command-chunks.js';
import { checkLayerChain } from '../src/settlement/embedded.js';
import { decodeSettlementMeta } from '../src/settlement/book.js';
import type { IdSource } from '../src/model/ids.js';
import { credentialKey, expiryKey, keySpaces, keys, ownedKey, prefixEnd, settlementKeys, spaceHolding } from '../src/model/keys.js';
import type { Range, ReadView } from '../src/store/port.js';
import { pagedEntries } from '../src/store/paged.js';
import { checkAccountPageEntries, checkOperationRefsMax } from './constants.js';

type Problem = (text: string) => void;

/** A key as a problem line quotes it: JSON-escaped (no control character reaches the terminal) and cut short. */
const quoted = (key: string) => JSON.stringify(key.length > 100 ? `${key.slice(0, 100)}…` : key);

/** The entries of one space in key order, a page at a time, at most `max`. */
const spaceEntries = (view: ReadView, space: string, max = Infinity) => pagedEntries(view, space, checkAccountPageEntries, max);

async function firstEntry(view: ReadView, range: Omit<Range, 'limit'>): Promise<string | null> {
  for await (const [key] of view.entries({ ...range, limit: 1 })) return key;
  return null;
}

/** Names every record no part of the layout owns; the spaces it owns are stepped over in one seek each. */
export async function checkForeignRecords(view: ReadView, problem: Problem): Promise<void> {
  let range: Omit<Range, 'limit'> = {};
  for (let key = await firstEntry(view, range); key !== null; key = await firstEntry(view, range)) {
    const space = spaceHolding(key);
    if (space !== null && space !== keySpaces.meta && key !== space) {
      range = { gte: prefixEnd(space) };
      continue;
    }
    if (!ownedKey(key)) problem(`record ${quoted(key)} is in no space of the book's layout: planted or damaged (no code reads it; a restore refuses it)`);
    range = { gt: key };
  }
}

/** Every credential belongs to a principal of the book; every token to its credential, as that credential's scheme makes them. */
export async function checkCredentials(view: ReadView, problem: Problem): Promise<void> {
  const principalKnown = async (principal: string) =>
    principal === builtInPrincipals.operator || principal === builtInPrincipals.identities || (await view.get(keys.identity(principal))) !== undefined;
  for await (const [key, text] of spaceEntries(view, keySpaces.credential)) {
    const id = key.slice(keySpaces.credential.length);
    try {
      const credential = decodeCredential(text);
      if (credential.id !== id) problem(`credential ${quoted(id)}: its record names ${quoted(credential.id)}`);
      if (!(await principalKnown(credential.identity))) problem(`credential ${quoted(id)} belongs to ${quoted(credential.identity)}, no principal of the book`);
    } catch (error) {
      if (!(error instanceof DamagedRecord)) throw error;
      problem(`credential ${quoted(id)}: ${error.message}`);
    }
  }
  // Which API-key credentials have a key already (one registration stores one).
  const keyed = new Set<string>();
  for await (const [key, text] of spaceEntries(view, keySpaces.token)) {
    // A token is named by its credential, never by its hash (the lookup key of a secret).
    try {
      const grant = decodeTokenGrant(text);
      const of = `${grant.scheme === 'api-key' ? 'an API key' : 'a session'} of credential ${quoted(grant.credential)}`;
      if (key.slice(keySpaces.token.length) !== grant.hash) problem(`${of} is stored under another token's hash`);
      const credentialText = await view.get(credentialKey(grant.credential));
      if (credentialText === undefined) {
        problem(`${of}: no such credential (the token acts for ${quoted(grant.principal)})`);
        continue;
      }
      let credential: Credential;
      try {
        credential = decodeCredential(credentialText);
      } catch {
        continue; // Named above, as its credential.
      }
      if (grant.principal !== credential.identity) problem(`${of} acts for ${quoted(grant.principal)}, not for the credential's principal ${quoted(credential.identity)}`);
      if (grant.scheme !== credential.scheme) problem(`${of}: the credential's scheme is ${credential.scheme}`);
      if (grant.scope !== undefined && JSON.stringify(grant.scope) !== JSON.stringify(credential.scope)) problem(`${of} reaches other accounts than its credential`);
      if (grant.scheme === 'api-key') {
        if (grant.expiresAtMs !== null) problem(`${of} expires; API keys do not`);
        if (keyed.has(grant.credential)) problem(`${of} is a second one: one registration stores one API key`);
        keyed.add(grant.credential);
      } else if (grant.expiresAtMs === null) {
        problem(`${of} never expires`);
      } else if ((await view.get(expiryKey('tokx', grant.expiresAtMs, grant.hash))) === undefined) {
        problem(`${of} is missing from the session expiry index`);
      }
    } catch (error) {
      if (!(error instanceof DamagedRecord)) throw error;
      problem(`a token record: ${error.message}`);
    }
  }
}

/**
 * The operations index (`ot/`, the operator's listing) against the operations: every operation,
 * decided (`op/`, read where it points) or not (in a `cmd/` chunk), has the entry its submission time and cseq name, naming it;
 * every entry names an operation. A book whose index is not built yet is not checked: ledgerd
 * builds it at open. Reads every entry and the operation it names, a page at a time; an item
 * inside a chunk is found by a seek of its own, so operations are looked up one by one only
 * when fewer items than operations stand at their operation's own time and cseq.
 */
export async function checkOperationIndex(view: ReadView, problem: Problem): Promise<void> {
  if ((await view.get(keys.operationTimeBuilt)) === undefined) return;
  let atOwnKey = 0;
  let previous = '';
  for await (const entries of pages(operationIndexItemsOf(pagedEntries(view, keySpaces.operationTime, checkAccountPageEntries), false))) {
    // Decided through op/<ref> (operation-records.ts: it leads to that reference or is damage), or still in the intake chunk of its cseq (a key of another shape has no cseq).
    const found = await readOperations(view, entries.map((e) => ({ ref: e.ref, cseq: Number.isSafeInteger(e.cseq) ? e.cseq : null })));
    for (const [i, e] of entries.entries()) {
      const op = found[i];
      if (op === undefined) problem(`operations index entry ${quoted(e.key)} names ${quoted(e.ref)}, no operation of the book`);
      // In key order (chunks that overlap count once), each at its own operation's key: distinct operations.
      else if (e.key > previous && op.cseq === e.cseq && op.submittedAtMs === e.submittedAtMs) atOwnKey++;
      if (e.key > previous) previous = e.key;
    }
  }
  if (atOwnKey === (await operationCount(view))) return;
  for (const space of [keySpaces.operation, keySpaces.command]) {
    for await (const page of pages(pagedEntries(view, space, checkAccountPageEntries))) {
      const ops = space === keySpaces.command ? commandChunkOperations(page) : await decidedOfEntries(view, page);
      for (const op of ops) {
        const entry = await operationIndexItem(view, op.submittedAtMs, op.cseq);
        if (entry?.ref !== op.ref) problem(`operation ${quoted(op.ref)} is missing from the operations index`);
      }
    }
  }
}

/** The book's operations: decided (`op/`), and those of `cmd/` chunks not decided yet. */
async function operationCount(view: ReadView): Promise<number> {
  let count = 0;
  for await (const page of pages(pagedEntries(view, keySpaces.operation, checkAccountPageEntries))) count += page.length;
  for await (const page of pages(pagedEntries(view, keySpaces.command, checkAccountPageEntries))) {
    const refs = commandChunkOperations(page).map((op) => op.ref);
    count += (await view.getMany(refs.map(keys.operation))).filter((pointer) => pointer === undefined).length;
  }
  return count;
}

/** Entries in pages of checkAccountPageEntries, each read back in one round trip by the caller. */
async function* pages<T>(entries: AsyncIterable<T>): AsyncGenerator<T[]> {
  let page: T[] = [];
  for await (const entry of entries) {
    page.push(entry);
    if (page.length === checkAccountPageEntries) {
      yield page;
      page = [];
    }
  }
  if (page.length > 0) yield page;
}

/** The book's first operation references decipher under the data dir's daemon.key: else it is another book's key, and every id would be misread. */
export async function checkDaemonKey(view: ReadView, ids: IdSource | null, problem: Problem): Promise<void> {
  let read = 0;
  let foreign = 0;
  for await (const [key] of spaceEntries(view, keySpaces.operation, checkOperationRefsMax)) {
    read++;
    if (ids === null || ids.cseqOf(key.slice(keySpaces.operation.length)) === null) foreign++;
  }
  if (ids === null && read > 0) problem('daemon.key: the data dir has none, and the book\'s ids were drawn under one (bring the book\'s own, from its data dir or a backup of it)');
  else if (foreign > 0) problem(`daemon.key: ${foreign} of the book's first ${read} operation references were not drawn under it: it is not this book's key (bring the book's own, from its data dir or a backup of it)`);
}

/** The first position a chunk's key names (16 hex digits), or null for a key of another shape. */
const chunkStart = (key: string, space: string): number | null => (/^[0-9a-f]{16}$/.test(key.slice(space.length)) ? parseInt(key.slice(space.length), 16) : null);

/**
 * Chunks of a space run without a gap: each begins where the one before ended, and the
 * last ends at `last` (the head's counter). `from`: where the first must begin (null: the
 * oldest may have been pruned, as event chunks were before store layout 5).
 */
async function checkChunks(view: ReadView, space: string, what: string, from: number | null, last: number, count: (value: string) => number, problem: Problem): Promise<void> {
  let next = from;
  for await (const [key, value] of spaceEntries(view, space)) {
    const start = chunkStart(key, space);
    if (start === null) {
      problem(`${what}: chunk ${quoted(key)} is not named by its first position`);
      continue;
    }
    if (next !== null && start !== next) problem(`${what}: ${next}..${start - 1} missing (the chunk after them begins at ${start}): records were lost`);
    next = start + count(value);
  }
  if (next !== null && next - 1 !== last) problem(`${what}: the head counts ${last}; the chunks end at ${next - 1}: records were lost`);
}

/** The head's counters and the settlement layer's chain, each against the records it accounts for. */
export async function checkCounters(view: ReadView, problem: Problem): Promise<void> {
  const headText = await view.get(keys.head);
  if (headText === undefined) {
    problem('the book has no head record');
    return;
  }
  const head = decodeHead(headText);
  await checkChunks(view, keySpaces.journal, 'journal entries', 1, head.postingSeq, journalChunkEntries, problem);
  await checkChunks(view, keySpaces.event, 'events', null, head.eventSeq, eventChunkLength, problem);
  const layerHeight = await checkLayerChain(view, problem);
  const taken = decodeSettlementMeta(await view.get(settlementKeys.meta)).height;
  if (layerHeight !== null && taken > layerHeight) problem(`settlement: the book took in the layer's blocks up to ${taken}; the layer holds ${layerHeight}: records were lost`);
}
