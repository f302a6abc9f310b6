/**
 * The store matrix over HTTP: the query routes' tests (queries.test.ts) against a
 * ledgerd whose book is on PostgreSQL: snapshots and paged range reads (movements,
 * statements, cursors) through the real API.
 */
import { daemonsOnPostgres } from '../support.js';

daemonsOnPostgres();
await import('../queries.test.js');
