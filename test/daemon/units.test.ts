/** The daemon's small pure pieces: raw JSON members, canonical JSON, statuses, query values, config. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseListen } from '../../daemon/config.js';
import { canonicalJson } from '../../daemon/http/digest.js';
import { limitQuery } from '../../daemon/http/query.js';
import { rawMember } from '../../daemon/http/raw-json.js';
import { httpStatus } from '../../daemon/http/status.js';
import { errorCodes } from '../../src/errors.js';
import { refusedWith as codeOf } from '../support/refusals.js';

describe('rawMember', () => {
  it('returns the member text exactly as sent', () => {
    expect(rawMember('{"a":1,"reference": { "x" : [1, "}"] } ,"b":2}', 'reference')).toBe('{ "x" : [1, "}"] }');
    expect(rawMember('{"reference":"a\\"b"}', 'reference')).toBe('"a\\"b"');
    expect(rawMember('{"reference":-1.50e+3}', 'reference')).toBe('-1.50e+3');
    expect(rawMember(' {\n"reference"\t:\tnull\n}', 'reference')).toBe('null');
    expect(rawMember('{"refer\\u0065nce":true}', 'reference')).toBe('true');
  });

  it('takes the last of duplicate members, as JSON.parse does, and null when absent', () => {
    expect(rawMember('{"reference":1,"reference":[2]}', 'reference')).toBe('[2]');
    expect(rawMember('{"a":{"reference":1}}', 'reference')).toBeNull();
    expect(rawMember('[{"reference":1}]', 'reference')).toBeNull();
    expect(rawMember('{}', 'reference')).toBeNull();
  });

  it('agrees with JSON.parse on any object', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.jsonValue(), (members, reference) => {
        const text = JSON.stringify({ ...members, reference }, null, 1);
        const raw = rawMember(text, 'reference');
        expect(JSON.parse(raw!)).toEqual(JSON.parse(JSON.stringify(reference)));
      }),
      { numRuns: 300 },
    );
  });
});

describe('canonicalJson', () => {
  it('sorts members, drops whitespace, and keeps values', () => {
    expect(canonicalJson(JSON.parse('{ "b": [1, {"d": 2, "c": 3}], "a": "x" }'))).toBe('{"a":"x","b":[1,{"c":3,"d":2}]}');
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(JSON.parse(canonicalJson(v))).toEqual(JSON.parse(JSON.stringify(v)));
      }),
      { numRuns: 200 },
    );
  });
});

describe('httpStatus', () => {
  it('gives every code of the catalogue the status of CONTRACT 6', () => {
    for (const code of errorCodes) expect(httpStatus(code)).toBeGreaterThanOrEqual(400);
    expect(httpStatus('ERR-QueryUnbounded')).toBe(400);
    expect(httpStatus('ERR-CredentialInvalid')).toBe(401);
    expect(httpStatus('ERR-NotAuthorised')).toBe(403);
    expect(httpStatus('ERR-UnknownOperation')).toBe(404);
    expect(httpStatus('ERR-InitialStateNotSealed')).toBe(409);
    expect(httpStatus('ERR-IdentifierArchived')).toBe(410);
    expect(httpStatus('ERR-Internal')).toBe(500);
    expect(httpStatus('ERR-DecisionUnavailable')).toBe(503);
    expect(httpStatus('ERR-SettlementLayerUnavailable')).toBe(503);
  });
});

describe('limitQuery', () => {
  it('takes 1..1000, refuses digits above as unbounded and anything else as malformed', () => {
    expect(limitQuery('1')).toBe(1);
    expect(limitQuery('1000')).toBe(1000);
    expect(limitQuery('0010')).toBe(10);
    expect(codeOf(() => limitQuery('1001'))).toBe('ERR-QueryUnbounded');
    expect(codeOf(() => limitQuery('1'.repeat(5000)))).toBe('ERR-QueryUnbounded');
    expect(codeOf(() => limitQuery('0'))).toBe('ERR-MalformedCommand');
    expect(codeOf(() => limitQuery('1e3'))).toBe('ERR-MalformedCommand');
    expect(codeOf(() => limitQuery(''))).toBe('ERR-MalformedCommand');
  });
});

describe('loadConfig', () => {
  const files = (map: Record<string, string>) => (path: string) => map[path] ?? null;

  it('has embedded defaults and is frozen', () => {
    const c = loadConfig({ flags: {}, env: {}, readFile: files({}) });
    expect(c).toMatchObject({ dataDir: './.ledgerd', listen: { host: '127.0.0.1', port: 8470 }, transferDeadlineMs: 30_000, reservationDeadlineMs: 604_800_000 });
    expect(c.relyingParty).toEqual({ id: 'localhost', origin: 'http://localhost:8470' });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('layers the config file, then the environment, then flags', () => {
    const file = JSON.stringify({ listen: '0.0.0.0:1', transferDeadlineMs: 5000, logLevel: 'debug', relyingParty: { id: 'file.example', origin: 'https://file.example' } });
    const fromFile = loadConfig({ flags: { dataDir: '/d' }, env: {}, readFile: files({ '/d/ledgerd.json': file }) });
    expect(fromFile).toMatchObject({ listen: { host: '0.0.0.0', port: 1 }, transferDeadlineMs: 5000, logLevel: 'debug', relyingParty: { id: 'file.example' } });
    const env = { LEDGERD_LISTEN: '127.0.0.2:2', LEDGERD_RP_ID: 'env.example', LEDGERD_RP_ORIGIN: 'https://env.example', LEDGERD_LOG_LEVEL: 'warn' };
    const fromEnv = loadConfig({ flags: { dataDir: '/d' }, env, readFile: files({ '/d/ledgerd.json': file }) });
    expect(fromEnv).toMatchObject({ listen: { host: '127.0.0.2', port: 2 }, logLevel: 'warn', relyingParty: { id: 'env.example', origin: 'https://env.example' } });
    const fromFlags = loadConfig({ flags: { dataDir: '/d', listen: '[::1]:3', logLevel: 'error' }, env, readFile: files({ '/d/ledgerd.json': file }) });
    expect(fromFlags).toMatchObject({ listen: { host: '::1', port: 3 }, logLevel: 'error' });
  });

  it('refuses unknown settings, values out of bounds, a missing explicit file and a bad listen address', () => {
    const bad = (file: string) => () => loadConfig({ flags: { config: '/c.json' }, env: {}, readFile: files({ '/c.json': file }) });
    expect(bad('{"colour":1}')).toThrow(ConfigError);
    expect(bad('{"backlogMax":0}')).toThrow(ConfigError);
    expect(bad('{"bodyBytesMax":1.5}')).toThrow(ConfigError);
    expect(bad('{"relyingParty":{"rp":1}}')).toThrow(ConfigError);
    expect(bad('not json')).toThrow(ConfigError);
    // The operator's share of event streams leaves at least one to everyone else.
    expect(bad('{"sseConnectionsMax":8,"sseOperatorConnectionsReserved":8}')).toThrow(ConfigError);
    expect(bad('{"sseConnectionsMax":10,"sseOperatorConnectionsReserved":8,"sseConnectionsPerPrincipalMax":1}')()).toMatchObject({ sseConnectionsMax: 10, sseOperatorConnectionsReserved: 8 });
    // Shares that add up (issue 20 item 9): a per-principal share is below what all but the operator share, for every pool.
    expect(bad('{"sseConnectionsMax":16}')).toThrow(/sseConnectionsPerPrincipalMax must be below sseConnectionsMax less sseOperatorConnectionsReserved/);
    expect(bad('{"sseConnectionsMax":17}')()).toMatchObject({ sseConnectionsMax: 17, sseConnectionsPerPrincipalMax: 8 });
    expect(bad('{"snapshotsMax":8,"snapshotsOperatorReserved":4,"snapshotsPerPrincipalMax":4}')).toThrow(/snapshotsPerPrincipalMax must be below/);
    expect(bad('{"snapshotsOperatorReserved":60}')).toThrow(/snapshotsPerPrincipalMax must be below/);
    expect(bad('{"store":{"kind":"postgres","url":"postgres://x","poolSize":4},"snapshotsMax":5}')).toThrow(/at most store.poolSize/);
    expect(bad('{"backlogMax":1}')).toThrow(ConfigError);
    expect(bad('{"snapshotQueueWaitMs":30000}')).toThrow(/below requestTimeoutMs/);
    expect(() => loadConfig({ flags: { config: '/none.json' }, env: {}, readFile: files({}) })).toThrow(ConfigError);
    for (const listen of ['8470', 'host:', 'host:99999', '::1:80', 'a b:1']) expect(() => parseListen(listen)).toThrow(ConfigError);
  });
});
