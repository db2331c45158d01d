// The link check of test/docs/docs-links.e2e-spec.ts: relative links of the repository's Markdown
// pages, and their #anchors against GitHub's heading slugs. Links inside code are not links.
import GithubSlugger from 'github-slugger';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The pages checked: the top-level guides, docs/, bench/ and each client's README. */
export function markdownPages(root: string): string[] {
  const top = ['README.md', 'ARCHITECTURE.md', 'SECURITY.md', 'bench/README.md', 'bench/results/README.md'];
  const docs = listMarkdown(root, 'docs');
  const clients = listMarkdown(root, 'clients', { recursive: true }).filter((p) => path.basename(p) === 'README.md');
  return [...top.filter((p) => existsSync(path.join(root, p))), ...docs, ...clients].sort();
}

function listMarkdown(root: string, dir: string, { recursive = false } = {}): string[] {
  const entries = readdirSync(path.join(root, dir), { withFileTypes: true, recursive });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.md') && !e.parentPath.includes('node_modules'))
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)));
}

/** The page's lines with fenced code blocks blanked and inline code removed. */
function proseLines(text: string): string[] {
  let fence: string | null = null;
  return text.split('\n').map((line) => {
    const marker = /^\s*(```|~~~)/.exec(line)?.[1];
    if (marker && (fence === null || fence === marker)) {
      fence = fence === null ? marker : null;
      return '';
    }
    return fence === null ? line.replace(/`[^`]*`/g, '') : '';
  });
}

/** The anchors GitHub gives the page's headings (a repeated heading gets -1, -2, …). */
function anchorsOf(text: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    // GitHub slugs the heading's text as rendered: links keep their text, emphasis loses its marks.
    const rendered = heading[1]
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/[*_]{1,3}([^*_]+)[*_]{1,3}/g, '$1')
      .replace(/`/g, '');
    anchors.add(slugger.slug(rendered));
  }
  return anchors;
}

const anchorCache = new Map<string, Set<string>>();
function anchorsOfFile(file: string): Set<string> {
  let anchors = anchorCache.get(file);
  if (!anchors) anchorCache.set(file, (anchors = anchorsOf(readFileSync(file, 'utf8'))));
  return anchors;
}

/**
 * The broken links of `page` (a path relative to `root`), as "page:line: target: reason".
 * `text` replaces the page's content (for testing the check itself).
 */
export function brokenLinks(root: string, page: string, text = readFileSync(path.join(root, page), 'utf8')): string[] {
  const broken: string[] = [];
  const own = anchorsOf(text);
  proseLines(text).forEach((line, i) => {
    for (const [, target] of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: and the like
      const [file, anchor] = target.split('#', 2);
      const where = `${page}:${i + 1}: ${target}`;
      const resolved = file === '' ? path.join(root, page) : path.join(root, path.dirname(page), decodeURI(file));
      if (file !== '' && !existsSync(resolved)) {
        broken.push(`${where}: no such file`);
        continue;
      }
      if (anchor === undefined || !resolved.endsWith('.md')) continue;
      const anchors = file === '' ? own : anchorsOfFile(resolved);
      if (!anchors.has(anchor))
        broken.push(`${where}: no such heading in ${file === '' ? page : path.relative(root, resolved)}`);
    }
  });
  return broken;
}
