/**
 * The store matrix over HTTP: the operator listings' tests (ops-listings.test.ts) against a
 * ledgerd whose book is on PostgreSQL: the operations index read newest first (a descending
 * keyset range), bounded scans and their cursors through the real API.
 */
import { daemonsOnPostgres } from '../support.js';

daemonsOnPostgres();
await import('../ops-listings.test.js');
