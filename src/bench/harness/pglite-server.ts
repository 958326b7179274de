/**
 * An embedded Postgres (startEmbedded: PGlite behind its loopback socket) in
 * a process of its own, as a store for the direct ceilings: in the service
 * PGlite has its thread and the queries come from worker threads, so the
 * bench's direct client must not share a thread with it either. Prints
 * {"msg":"listening","port":N}; SIGTERM stops it.
 */
import { startEmbedded } from '../../storage/postgres/embedded.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: pglite-server.js <data dir>');
const embedded = await startEmbedded(dir);
process.stdout.write(`${JSON.stringify({ msg: 'listening', port: Number(new URL(embedded.url).port) })}\n`);
process.on('SIGTERM', () => {
  embedded.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
