/**
 * The targets of a `Link` header (RFC 8288) with the given relation type:
 * `<https://…/v1/pets?limit=2&cursor=abc>; rel="next"`. Targets are read between angle
 * brackets, so commas inside a URI do not split it; `rel` may list several types.
 */
export function linkTargets(header: string | null, rel: string): string[] {
  if (!header) return [];
  const targets: string[] = [];
  for (const [, target, params] of header.matchAll(/<([^>]*)>((?:\s*;\s*[^;,<]*)*)/g)) {
    const rels = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,"]+))/i.exec(params);
    const types = (rels?.[1] ?? rels?.[2] ?? '').toLowerCase().split(/\s+/);
    if (types.includes(rel.toLowerCase())) targets.push(target);
  }
  return targets;
}
