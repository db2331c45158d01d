/**
 * The console's one template helper: `markup` is a tagged template whose interpolated values are
 * escaped as HTML text (safe in element content and in quoted attribute values), unless they are
 * Html already (another template, or `trusted` markup built here). Arrays are joined; null,
 * undefined and false render nothing. (Named markup, not html: prettier would reformat templates
 * tagged html as documents, changing the text they render.)
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type HtmlValue = Html | string | number | bigint | boolean | null | undefined | readonly HtmlValue[];

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

function render(value: HtmlValue): string {
  if (value instanceof Html) return value.text;
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return (value as readonly HtmlValue[]).map(render).join('');
  return escapeHtml(String(value as string | number | bigint | boolean));
}

export function markup(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let text = strings[0];
  for (let i = 0; i < values.length; i++) text += render(values[i]) + strings[i + 1];
  return new Html(text);
}
