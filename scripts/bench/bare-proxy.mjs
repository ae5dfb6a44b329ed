#!/usr/bin/env node
// The floor for bench:proxy: a bare node:http pass-through proxy. It forwards every request
// (method, path, headers, body) to UPSTREAM over a kept-alive agent and pipes the answer back as
// it comes, streamed or not; it parses nothing. No gateway can add less latency than this.
//
//   UPSTREAM=http://127.0.0.1:18080 PORT=0 node scripts/bench/bare-proxy.mjs   (prints {"listening": port})
import http from 'node:http';

const upstream = new URL(process.env.UPSTREAM ?? 'http://127.0.0.1:18080');
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 1024 });
// Hop-by-hop headers (RFC 9110 section 7.6.1) are the proxy's own, never forwarded.
const HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'host',
]);

function forwardable(raw) {
  const out = {};
  for (const [k, v] of Object.entries(raw)) if (!HOP.has(k)) out[k] = v;
  return out;
}

const server = http.createServer({ noDelay: true }, (req, res) => {
  const up = http.request(
    {
      agent,
      protocol: upstream.protocol,
      hostname: upstream.hostname,
      port: upstream.port,
      method: req.method,
      path: req.url,
      headers: { ...forwardable(req.headers), host: upstream.host },
    },
    (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, forwardable(upRes.headers));
      upRes.pipe(res);
    },
  );
  up.on('error', (err) => {
    if (!res.headersSent) {
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `upstream: ${err.message}` } }));
    } else res.destroy(err);
  });
  res.on('close', () => {
    if (!res.writableFinished) up.destroy();
  });
  req.pipe(up);
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  console.log(JSON.stringify({ listening: server.address().port }));
});
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
