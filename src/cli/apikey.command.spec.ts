import { runApiKeyTool } from './apikey.command.js';

describe('apikey tool', () => {
  it('answers a usage error with the usage on stderr and exit code 2, touching no database', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runApiKeyTool(['create', '--plan', 'gold', '--name', 'x'], {
      out: (t) => out.push(t),
      err: (t) => err.push(t),
      env: { DATA_DIR: '/nonexistent/never-created' },
    });
    expect(code).toBe(2);
    expect(out).toEqual([]);
    expect(err.join('')).toMatch(/^apikey: plan must be one of free, pro, business, enterprise, got "gold"\n\nUsage:/);
  });

  it('writes what it echoes of its arguments with control and bidirectional characters escaped', async () => {
    const err: string[] = [];
    const code = await runApiKeyTool(['create', '--plan', 'gold\u001b]0;owned\u0007\u202e', '--name', 'x'], {
      out: () => {},
      err: (t) => err.push(t),
      env: { DATA_DIR: '/nonexistent/never-created' },
    });
    expect(code).toBe(2);
    expect(err.join('')).toMatch(/^apikey: plan must be one of .*, got "gold\\u001B\]0;owned\\u0007\\u202E"\n\nUsage:/);
  });

  it('answers a bad configuration with exit code 78', async () => {
    const err: string[] = [];
    const code = await runApiKeyTool(['list'], {
      out: () => {},
      err: (t) => err.push(t),
      env: { API_KEY_CACHE_TTL_MS: '9000' },
    });
    expect(code).toBe(78);
    expect(err.join('')).toMatch(/^configuration error: [^\n]*API_KEY_CACHE_TTL_MS[^\n]*\n$/);
  });
});
