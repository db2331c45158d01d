import { execFileSync } from 'node:child_process';

/**
 * Finds `binary` on PATH, or installs Debian's `pkg` with apt-get (CI installs it in the
 * background first; a developer's machine may lack it), bounded in time.
 */
export function findOrInstall(binary: string, pkg: string): string {
  const find = () => {
    try {
      return execFileSync('sh', ['-c', `command -v ${binary}`], { encoding: 'utf8' }).trim();
    } catch {
      return '';
    }
  };
  let found = find();
  if (found === '') {
    try {
      execFileSync(
        'sh',
        [
          '-c',
          `DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${pkg} || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${pkg})`,
        ],
        {
          stdio: 'ignore',
          timeout: 300_000,
        },
      );
    } catch {
      // reported below
    }
    found = find();
  }
  if (found === '')
    throw new Error(
      `${binary} is not installed and could not be installed: \`apt-get install -y ${pkg}\`, then run again`,
    );
  return found;
}
