// The types of bench/latest-result.mjs, for the tests written in TypeScript.

export const HISTORY: string;
export const PAGE: string;
export const START: string;
export const END: string;

/** bench/results/history.json's shape, as far as the section reads it. */
export interface History {
  targets: Record<string, number>;
  runs: Array<Record<string, unknown> & { run: string; service: string; loadAverageBefore: number }>;
}

/** The section's Markdown, markers included, from history.json's contents. */
export function latestResult(history: History): string;
/** `page` with its section between the markers replaced by `section`. */
export function withSection(page: string, section: string): string;
/** The page as `npm run bench:docs` would write it. */
export function generatedPage(page?: string, history?: History): string;
