/**
 * The rules of a name a person gives and an operator reads: an animal's name (docs/api.md,
 * "Requests"), an API key's and an admin token's (docs/api-keys.md). One function of the text and
 * its longest length, so the public API, the admin API and the key tool judge a name alike.
 *
 * - Length is counted in Unicode code points, as PostgreSQL counts the characters of
 *   `varchar(255)` in a UTF-8 database: variation selectors, combining marks and astral
 *   characters count once, so they are here (validator.js's isLength skips U+FE0E/U+FE0F).
 * - Refused anywhere: control characters (`\p{Cc}`: C0, DEL, C1 such as U+0085 NEL and U+009B
 *   CSI), unpaired surrogates (not encodable as UTF-8), the line and paragraph separators
 *   U+2028/U+2029, and the bidirectional embedding, override and isolate controls
 *   (U+202A–U+202E, U+2066–U+2069), which reorder how the text around them is displayed.
 * - Other format characters are allowed inside a name (ZWJ joins emoji and Indic letters, ZWNJ
 *   is part of Persian spelling, LRM/RLM mark direction), but a name needs at least one visible
 *   character: one that is not white space (`White_Space`), default-ignorable
 *   (`Default_Ignorable_Code_Point`: the Hangul fillers U+115F, U+1160, U+3164, U+FFA0, the
 *   Mongolian vowel separator U+180E and the invisible operators are), a mark (`\p{M}`), a
 *   format character (`\p{Cf}`), nor one of the graphic characters that render as nothing,
 *   BLANK_GRAPHICS. The properties are the runtime's Unicode data, so a blank character is
 *   judged the same way in every name.
 */

/**
 * Graphic characters (general category So) whose glyph is empty: U+2800 BRAILLE PATTERN BLANK
 * and U+1D159 MUSICAL SYMBOL NULL NOTEHEAD. The Hangul fillers are repeated here, so they stay
 * blank with Unicode data that would not list them as default-ignorable.
 */
export const BLANK_GRAPHICS = [0x2800, 0x1d159, 0x115f, 0x1160, 0x3164, 0xffa0] as const;

export type NameProblem = 'length' | 'forbidden' | 'blank';

// With the u flag, \p{Cs} matches only unpaired surrogates (a pair is one code point).
const FORBIDDEN = /[\p{Cc}\p{Cs}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;
const FORBIDDEN_ALL = new RegExp(FORBIDDEN.source, 'gu');
const VISIBLE =
  /[^\p{White_Space}\p{Default_Ignorable_Code_Point}\p{M}\p{Cf}\p{Cc}\p{Cs}\u2800\u{1d159}\u115f\u1160\u3164\uffa0]/u;

/** Code points of a string, a lone surrogate counting as one (as its replacement would). */
export function codePointLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** What is wrong with a name of at most `maxCodePoints`, or undefined when it is acceptable. */
export function nameProblem(name: string, maxCodePoints: number): NameProblem | undefined {
  const length = codePointLength(name);
  if (length < 1 || length > maxCodePoints) return 'length';
  if (FORBIDDEN.test(name)) return 'forbidden';
  if (!VISIBLE.test(name)) return 'blank';
  return undefined;
}

/** The message for a problem of the name in `field`, as the public API, the admin API and the key tool give it. */
export function nameMessage(problem: NameProblem, field: string, maxCodePoints: number): string {
  switch (problem) {
    case 'length':
      return `${field} must be 1 to ${maxCodePoints} characters long`;
    case 'blank':
      return `${field} must contain a visible character`;
    case 'forbidden':
      return `${field} must not contain control characters, line separators, bidirectional controls or unpaired surrogates`;
  }
}

/**
 * Text with every character a name may not hold written as a \uXXXX escape, for a terminal: a
 * name stored before these rules (or any text from outside) cannot move the cursor, reorder the
 * line or send a terminal command. In JSON text the escapes are the JSON escapes of the same
 * characters, so a JSON document stays the same value.
 */
export function escapeUnsafeText(text: string): string {
  return text.replace(FORBIDDEN_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`);
}
