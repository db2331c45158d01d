// fast-check arbitraries shared by the property-based specs: the values (int64, characters,
// code points, nesting, percent-encoding). The hostile requests of the fuzz suites are in
// request-arbitraries.ts, apart: their full-Unicode strings cost a second to build, which the
// specs that need only these values do not pay.
import fc from 'fast-check';

export const INT64_MAX = 2n ** 63n - 1n;
/** Every signed 64-bit integer. */
export const int64 = fc.bigInt({ min: -(2n ** 63n), max: INT64_MAX });

/** One character of a code unit from `min` to `max` (0x20-0x7e: visible ASCII and space; 0x20-0xff: Latin-1). */
export const charIn = (min: number, max: number) => fc.integer({ min, max }).map((c) => String.fromCharCode(c));

/** Strings of `minLength` to `maxLength` code points drawn from `codePoint`. */
export const codePointString = (codePoint: fc.Arbitrary<number>, minLength: number, maxLength: number) =>
  fc.array(codePoint, { minLength, maxLength }).map((cps) => String.fromCodePoint(...cps));

/** Code points where validators, JSON and databases disagree. */
export const trickyCodePoint = fc.oneof(
  fc.integer({ min: 0x20, max: 0x7e }),
  fc.integer({ min: 0x00, max: 0x1f }),
  fc.integer({ min: 0x7f, max: 0x9f }), // DEL and C1 controls
  fc.integer({ min: 0x0300, max: 0x036f }), // combining marks
  fc.integer({ min: 0xfe00, max: 0xfe0f }), // variation selectors
  fc.integer({ min: 0xe0100, max: 0xe01ef }), // variation selectors supplement
  fc.integer({ min: 0xe0000, max: 0xe007f }), // tags
  fc.integer({ min: 0x1f000, max: 0x1faff }), // astral symbols
  fc.integer({ min: 0xd800, max: 0xdfff }), // lone surrogates
  fc.constantFrom(
    0x00a0,
    0x00ad,
    0x061c,
    0x115f,
    0x180e,
    0x200b,
    0x200c,
    0x200d,
    0x200e,
    0x200f,
    0x2028,
    0x2029,
    0x202a,
    0x202e,
    0x2060,
    0x2066,
    0x2069,
    0x3000,
    0x3164,
    0xfeff,
    0xfffd,
    0xffff,
    0x10ffff,
  ),
);

/** Strings of any Unicode, and ones built to sit on a length bound (`maxLength` code points). */
export function hostileString(maxLength = 64): fc.Arbitrary<string> {
  const around = fc.integer({ min: Math.max(0, maxLength - 2), max: maxLength + 2 });
  return fc.oneof(
    fc.string({ unit: 'binary', maxLength: 80 }),
    codePointString(trickyCodePoint, 0, 40),
    fc
      .tuple(around, fc.constantFrom('\uFE0F', '\uFE0E', '\u0301', '\u{E0100}', '\u{1F436}', '\u200B', 'a'))
      .map(([n, c]) => `a${c.repeat(Math.max(0, n - 1))}`),
    fc.tuple(around, codePointString(trickyCodePoint, 1, 3)).map(([n, s]) => 'b'.repeat(Math.max(0, n - 1)) + s),
    fc.constantFrom('', ' ', '\u00A0', '\u200B\u200B', '\u202Eexe.txt', 'null', '__proto__', 'constructor', 'Rex'),
  );
}

/** `inner` inside `depth` arrays or objects (`open` is `[` or an object's start), closed or not. */
export function nested(open: string, depth: number, inner: string, closed = true): string {
  return open.repeat(depth) + inner + (closed ? (open === '[' ? ']' : '}').repeat(depth) : '');
}

// ---------------------------------------------------------------- percent-encoding

const ESCAPES = Array.from({ length: 256 }, (_, b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`);
const ESCAPES_LOWER = ESCAPES.map((e) => e.toLowerCase());
/** For each `keep` pattern, which ASCII bytes it keeps: the fuzz suites encode strings of up to 20,000 bytes per case. */
const keptBytes = new Map<string, boolean[]>();

/** Percent-encodes the UTF-8 bytes of s (a lone surrogate becomes U+FFFD), all but `keep`. */
export function pct(s: string, keep = /[A-Za-z0-9\-._~]/, lower = false): string {
  let kept = keptBytes.get(keep.source);
  if (!kept)
    keptBytes.set(keep.source, (kept = Array.from({ length: 128 }, (_, b) => keep.test(String.fromCharCode(b)))));
  const escapes = lower ? ESCAPES_LOWER : ESCAPES;
  const bytes = Buffer.from(s, 'utf8');
  const text = bytes.toString('latin1'); // one character per byte
  let out = '';
  let from = 0; // the first kept byte not yet copied
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (byte < 0x80 && kept[byte]) continue;
    out += text.slice(from, i) + escapes[byte];
    from = i + 1;
  }
  return out + text.slice(from);
}

/** Percent-encoding of every flavour, including invalid escapes. */
export function encodeAs(s: string, mode: number): string {
  switch (mode % 4) {
    case 0:
      return pct(s);
    case 1:
      return pct(s, /[A-Za-z0-9\-._~!$'()*+,;=:@/?[\]]/, true);
    case 2:
      return pct(s).replace(/%/g, (_, i: number) => (i % 3 === 0 ? '%' : '%z'));
    default:
      return `${pct(s)}%${s.length % 2 ? 'G' : ''}`;
  }
}
