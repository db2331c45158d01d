const noticesGiven = new Set<string>();

/**
 * `describe` when `available`, else `describe.skip` with a line saying why (once per reason and
 * test file), so a skipped suite is never mistaken for a passing one.
 */
export function describeIf(available: boolean, reason: string): (title: string, suite: () => void) => void {
  return (title, suite) => {
    if (!available && !noticesGiven.has(reason)) {
      noticesGiven.add(reason);
      process.stderr.write(`skipped: ${reason}\n`);
    }
    (available ? describe : describe.skip)(title, suite);
  };
}
