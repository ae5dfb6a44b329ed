import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';

describe('standalone settings', () => {
  it('listens on loopback unless HOST says otherwise', () => {
    expect(loadConfig({}).host).toBe('127.0.0.1');
    expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
  });

  it('has the documented request bounds and scoring defaults', () => {
    const c = loadConfig({});
    expect(c.maxJsonDepth).toBe(64);
    expect(c.bodyLimitBytes).toBe(1024 * 1024);
    expect(c.scoreTimeoutMs).toBe(10_000);
    expect(c.scoreThreads).toBe(Math.max(1, Math.floor(os.availableParallelism() / c.workers)));
    expect(loadConfig({ GUARD_WORKERS: '1', GUARD_SCORE_THREADS: '0' }).scoreThreads).toBe(0);
    expect(c.scoreInlineChars).toBe(4000);
  });

  it('refuses bad values, naming each variable', () => {
    expect(() => loadConfig({ GUARD_SCORE_THREADS: 'many', GUARD_MAX_JSON_DEPTH: '1' })).toThrow(
      /GUARD_SCORE_THREADS[\s\S]*GUARD_MAX_JSON_DEPTH|GUARD_MAX_JSON_DEPTH[\s\S]*GUARD_SCORE_THREADS/,
    );
  });
});
