#!/usr/bin/env node
// A round-robin HTTP front for several API pods, as a Kubernetes Service spreads requests: each
// request goes to the next pod in turn, streamed both ways (server-sent events included), so a
// client's write and its next read usually land on different pods.
//
//   node scripts/distributed/round-robin.mjs PORT http://127.0.0.1:8081 http://127.0.0.1:8082
//
// Prints {"listening": PORT} once it accepts connections.
import http from 'node:http';

const [port, ...targets] = process.argv.slice(2);
if (!port || targets.length === 0) {
  console.error('usage: round-robin.mjs PORT TARGET_URL...');
  process.exit(2);
}
const pods = targets.map((t) => new URL(t));
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
let next = 0;

const server = http.createServer((req, res) => {
  const pod = pods[next++ % pods.length];
  const upstream = http.request(
    {
      host: pod.hostname,
      port: pod.port,
      method: req.method,
      path: req.url,
      headers: req.headers,
      agent,
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      answer.pipe(res);
    },
  );
  upstream.on('error', (err) => {
    if (res.headersSent) res.destroy(err);
    else {
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'pod unreachable', detail: err.message }));
    }
  });
  // A client that goes away cancels the pod's request too.
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  req.pipe(upstream);
});
server.keepAliveTimeout = 65_000;
server.listen(Number(port), '127.0.0.1', () => {
  console.log(JSON.stringify({ listening: server.address().port }));
});
for (const signal of ['SIGTERM', 'SIGINT'])
  process.on(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
