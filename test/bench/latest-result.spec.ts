// docs/performance.md's "Latest result" is what `npm run bench:docs` (bench/latest-result.mjs)
// makes from bench/results/history.json, and the script finds each figure in the newest run
// that has it.
import { readFileSync } from 'node:fs';
import {
  END,
  generatedPage,
  HISTORY,
  latestResult,
  PAGE,
  START,
  withSection,
  type History,
} from '../../bench/latest-result.mjs';

const history = JSON.parse(readFileSync(HISTORY, 'utf8')) as History;

describe('docs/performance.md, "Latest result"', () => {
  it('is what npm run bench:docs generates from bench/results/history.json', () => {
    const page = readFileSync(PAGE, 'utf8');
    expect(page).toContain(START);
    // The section alone, so that a failure shows the lines that differ.
    const section = (text: string) => text.slice(text.indexOf(START), text.indexOf(END) + END.length);
    expect(section(page)).toEqual(section(generatedPage(page, history)));
  });

  it('takes each figure from the newest run that measured it, and marks a met target in bold', () => {
    const runs = [
      { run: 'A', service: 'first', loadAverageBefore: 1, listPetsVsRaw: 0.7, getPetVsRaw: 0.4 },
      { run: 'B', service: 'second', loadAverageBefore: 2, date: '2026-01-02', listPetsVsRaw: 0.6 },
    ];
    const text = latestResult({ targets: { listPetsVsRaw: 0.65, getPetVsRaw: 0.5 }, runs });
    expect(text).toContain('| listPets, one key, capacity vs raw | ≥ 0.65x | 0.60x | B |');
    expect(text).toContain('| getPet vs raw | ≥ 0.50x | 0.40x | A |');
    expect(text).toContain('- Run B (2026-01-02): second; load average 2.0 before.');
    expect(text).toContain('- Run A: first; load average 1.0 before.');
    const met = latestResult({ targets: { listPetsVsRaw: 0.65 }, runs: [runs[0]] });
    expect(met).toContain('| listPets, one key, capacity vs raw | ≥ 0.65x | **0.70x** | A |');
  });

  it('replaces only what lies between the markers, and refuses a page without them', () => {
    const page = `# Title\n\nbefore\n${START}\nold\n${END}\nafter\n`;
    expect(withSection(page, `${START}\nnew\n${END}`)).toBe(`# Title\n\nbefore\n${START}\nnew\n${END}\nafter\n`);
    expect(() => withSection('# Title\n', 'x')).toThrow('no <!-- latest-result:start -->');
  });
});
