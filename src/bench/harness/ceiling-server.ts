/**
 * The transport ceiling: a bare uWS server answering POST /logs the way the
 * service does (read the whole body, 202 + a small JSON body) and doing
 * nothing else. Run as its own process by the bench (harness/ceiling.ts).
 */
import uWS from 'uWebSockets.js';

uWS
  .App()
  .post('/logs', (res) => {
    res.onAborted(() => {
      res.aborted = true;
    });
    res.onData((_, last) => {
      if (last && !res.aborted) res.cork(() => res.writeStatus('202 Accepted').end('{"accepted":1}'));
    });
  })
  .listen('127.0.0.1', 0, (socket) => {
    if (!socket) {
      process.stderr.write('cannot listen\n');
      process.exit(1);
    }
    process.stdout.write(`${JSON.stringify({ msg: 'listening', port: uWS.us_socket_local_port(socket) })}\n`);
  });

process.on('SIGTERM', () => process.exit(0));
