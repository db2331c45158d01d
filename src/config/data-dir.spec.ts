import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { checkDataDir } from './data-dir.js';

describe('the start-up check of DATA_DIR', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'data-dir-check-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('creates a missing directory and its parents, and leaves nothing in it', async () => {
    const nested = path.join(dir, 'a', 'b', 'data');
    expect(await checkDataDir(nested)).toBeUndefined();
    expect(readdirSync(nested)).toEqual([]);
  });

  it('refuses a file, a path through a file, and a place that cannot be created', async () => {
    const file = path.join(dir, 'file');
    writeFileSync(file, '');
    expect(await checkDataDir(file)).toMatch(/^DATA_DIR .*file is a file, not a directory/);
    expect(await checkDataDir(path.join(file, 'data'))).toMatch(/cannot be a directory: part of its path is a file/);
    expect(await checkDataDir('/proc/animal-store-nope')).toMatch(
      /^DATA_DIR \/proc\/animal-store-nope cannot be created: mkdir \/proc\/animal-store-nope: /,
    );
  });

  it('refuses a directory another live process holds, once the wait is over', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    try {
      writeFileSync(path.join(dir, 'animal-store.lock'), `${child.pid}\n${hostname()}\nother server\n`);
      expect(await checkDataDir(dir, 200)).toMatch(new RegExp(`in use by process ${child.pid} .*other server`));
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('takes a directory whose holder lets go while it waits', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    writeFileSync(path.join(dir, 'animal-store.lock'), `${child.pid}\n${hostname()}\nstopping server\n`);
    const checked = checkDataDir(dir, 20_000);
    child.kill('SIGTERM');
    expect(await checked).toBeUndefined();
  });
});
