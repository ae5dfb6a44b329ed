import { createServer, type Server } from 'node:http';
import type { GuardMetrics } from './metrics.js';

/** What a role's probes ask: each role says what live and ready mean for it. */
export interface HealthProbe {
  /** The process can still make progress (e.g. its consumer has not died for good). */
  live(): boolean;
  /** It can take work now (e.g. in its consumer group, connected). */
  ready(): boolean;
}

export interface RunningHealthServer {
  server: Server;
  /** Where it listens, e.g. `http://127.0.0.1:8090`. */
  url: string;
  close(): Promise<void>;
}

/**
 * `/healthz` (liveness) and `/readyz` (readiness) for the orchestrator's probes, and `/metrics`
 * for Prometheus when given metrics; nothing else. What the roles without an HTTP API of their
 * own (ingester, scorer, jobs worker) listen with.
 */
export function startHealthServer(
  probe: HealthProbe,
  port: number,
  host: string,
  metrics: GuardMetrics | null = null,
): Promise<RunningHealthServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (metrics && path === '/metrics' && (req.method === 'GET' || req.method === 'HEAD')) {
      metrics.render().then(
        (text) => {
          res.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' });
          res.end(req.method === 'HEAD' ? undefined : text);
        },
        () => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: 'metrics could not be collected' }));
        },
      );
      return;
    }
    let status = 404;
    let body: Record<string, string> = { error: 'not found' };
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      status = 405;
      body = { error: 'method not allowed' };
    } else if (path === '/healthz') {
      status = probe.live() ? 200 : 503;
      body = { status: status === 200 ? 'ok' : 'failed' };
    } else if (path === '/readyz') {
      status = probe.ready() ? 200 : 503;
      body = { status: status === 200 ? 'ready' : 'not ready' };
    }
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : JSON.stringify(body));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : port;
      const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
      resolve({
        server,
        url: `http://${shown}:${bound}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
