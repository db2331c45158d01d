import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { acquireDataDirLock, DataDirLockedError } from './data-dir-lock.js';

describe('data directory lock', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'lock-test-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is exclusive and names its holder', () => {
    const lock = acquireDataDirLock(dir, 'first holder');
    expect(() => acquireDataDirLock(dir)).toThrow(DataDirLockedError);
    expect(() => acquireDataDirLock(dir)).toThrow(new RegExp(`in use by process ${process.pid} .*first holder`));
    lock.release();
    const again = acquireDataDirLock(dir);
    again.release();
    expect(existsSync(path.join(dir, 'animal-store.lock'))).toBe(false);
  });

  it('refuses while another live process holds it', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    try {
      writeFileSync(path.join(dir, 'animal-store.lock'), `${child.pid}\n${hostname()}\nother server\n`);
      expect(() => acquireDataDirLock(dir)).toThrow(new RegExp(`process ${child.pid}`));
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('takes over a lock whose process is gone', async () => {
    const child = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => child.on('exit', r));
    writeFileSync(path.join(dir, 'animal-store.lock'), `${child.pid}\n${hostname()}\ncrashed\n`);
    const lock = acquireDataDirLock(dir, 'me');
    expect(readFileSync(lock.file, 'utf8')).toContain(`${process.pid}\n`);
    lock.release();
  });
});
