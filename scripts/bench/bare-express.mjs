#!/usr/bin/env node
// The ceiling for bench:monitor: an express app that parses the same JSON body and answers a
// small JSON object, with the same number of processes as the guard (GUARD_WORKERS, `auto` = one
// per core) accepting connections themselves. Nothing a guard could do costs less than this.
//
//   PORT=0 GUARD_WORKERS=auto node scripts/bench/bare-express.mjs   (prints {"listening": port})
import cluster from 'node:cluster';
import os from 'node:os';
import express from 'express';

const workersEnv = process.env.GUARD_WORKERS ?? 'auto';
const workers = workersEnv === 'auto' ? os.availableParallelism() : Number(workersEnv);

if (cluster.isPrimary && workers > 1) {
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  // Workers must share one port: the primary picks a free one first when asked for 0.
  let port = Number(process.env.PORT ?? 0);
  if (port === 0) {
    const probe = (await import('node:net')).createServer();
    port = await new Promise((resolve) =>
      probe.listen(0, '127.0.0.1', () => resolve(probe.address().port)),
    );
    await new Promise((resolve) => probe.close(resolve));
  }
  let ready = 0;
  for (let i = 0; i < workers; i++) {
    cluster.fork({ PORT: String(port) }).on('message', () => {
      if (++ready === workers) console.log(JSON.stringify({ listening: port }));
    });
  }
  process.on('SIGTERM', () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
    process.exit(0);
  });
} else {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(express.json({ limit: '1mb' }));
  app.post('/guard/monitor', (req, res) => {
    res.json({ ok: true, fields: Object.keys(req.body ?? {}).length });
  });
  const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    if (process.send) process.send('listening');
    else console.log(JSON.stringify({ listening: server.address().port }));
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}
