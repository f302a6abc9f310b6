/**
 * The store matrix over HTTP: the command routes' tests (commands.test.ts), each one,
 * against a ledgerd whose book is on PostgreSQL. They cover the decision path end to
 * end (acknowledgement, decision, repeats under a client key, reservations, refusals).
 */
import { daemonsOnPostgres } from '../support.js';

daemonsOnPostgres();
await import('../commands.test.js');
