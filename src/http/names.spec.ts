import fc from 'fast-check';
import { charIn, codePointString } from '../../test/support/arbitraries.js';
import { BLANK_GRAPHICS, codePointLength, escapeUnsafeText, nameMessage, nameProblem } from './names.js';

/** The longest pet name; key and admin token names are shorter (100). */
const NAME_MAX_CODE_POINTS = 255;
const check = (name: string) => nameProblem(name, NAME_MAX_CODE_POINTS);

/** Code points drawn from the ranges where validators and databases disagree. */
const trickyCodePoint = fc.oneof(
  fc.integer({ min: 0x20, max: 0x7e }), // ASCII
  fc.integer({ min: 0x0300, max: 0x036f }), // combining marks
  fc.integer({ min: 0xfe00, max: 0xfe0f }), // variation selectors
  fc.integer({ min: 0xe0100, max: 0xe01ef }), // variation selectors supplement
  fc.integer({ min: 0x1f300, max: 0x1faff }), // astral symbols
  fc.integer({ min: 0x0590, max: 0x06ff }), // Hebrew, Arabic
  fc.integer({ min: 0x4e00, max: 0x4fff }), // CJK
  fc.constantFrom(0x200b, 0x200c, 0x200d, 0x200e, 0x200f, 0x2060, 0xfeff, 0x00ad, 0x3164),
);
const wellFormed = codePointString(trickyCodePoint, 0, 300);
const visibleLetter = charIn(0x61, 0x7a);

/** Every code point of a general category, as a JavaScript regex sees it. */
const ofCategory = (re: RegExp) =>
  fc
    .integer({ min: 0, max: 0x10ffff })
    .filter((cp) => (cp < 0xd800 || cp > 0xdfff) && re.test(String.fromCodePoint(cp)));

describe('names (animals, API keys, admin tokens)', () => {
  it('counts length in code points, as PostgreSQL counts varchar characters (UTF-8 code points)', () => {
    fc.assert(
      fc.property(wellFormed, (s) => {
        expect(codePointLength(s)).toBe(Array.from(s).length);
      }),
    );
  });

  it('accepts a visible name up to 255 code points and refuses one longer, whatever the code points', () => {
    fc.assert(
      fc.property(
        visibleLetter,
        wellFormed.filter((s) => check(`a${s}`) !== 'forbidden'),
        (first, rest) => {
          const name = first + rest;
          const length = Array.from(name).length;
          expect(check(name) === 'length').toBe(length > NAME_MAX_CODE_POINTS);
        },
      ),
    );
    expect(check('a\uFE0F'.repeat(200))).toBe('length');
    expect(check('a'.repeat(254) + '\uFE0F'.repeat(2))).toBe('length');
    expect(check('a' + '\uFE0E'.repeat(255))).toBe('length');
    expect(check('a'.repeat(254) + '\uFE0F')).toBeUndefined();
    expect(check('')).toBe('length');
  });

  it('refuses every control character (\\p{Cc}) and every unpaired surrogate, anywhere in a name', () => {
    const control = fc
      .oneof(fc.integer({ min: 0, max: 0x1f }), fc.integer({ min: 0x7f, max: 0x9f }))
      .map((c) => String.fromCharCode(c));
    const lone = charIn(0xd800, 0xdfff);
    fc.assert(
      fc.property(
        fc.oneof(control, lone),
        fc.string({ maxLength: 20 }),
        fc.string({ maxLength: 20 }),
        (bad, before, after) => {
          // A lone surrogate next to another may pair with it: only unpaired ones are refused.
          const name = `R${before.replace(/[\ud800-\udfff]/g, '')}${bad}${after.replace(/[\ud800-\udfff]/g, '')}x`;
          expect(check(name)).toBe(name.length > NAME_MAX_CODE_POINTS ? 'length' : 'forbidden');
        },
      ),
    );
    fc.assert(
      fc.property(ofCategory(/\p{Cc}/u), (cp) => expect(check(`a${String.fromCodePoint(cp)}`)).toBe('forbidden')),
    );
  });

  it('refuses line separators and the bidirectional embedding, override and isolate controls', () => {
    for (const cp of [0x2028, 0x2029, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069]) {
      expect(check(`Rex${String.fromCharCode(cp)}`)).toBe('forbidden');
    }
  });

  it('refuses, at any length limit, any name holding a C0 or C1 control, U+2028/U+2029 or a bidirectional control', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: 0, max: 0x1f }),
          fc.integer({ min: 0x7f, max: 0x9f }),
          fc.constantFrom(0x2028, 0x2029),
          fc.integer({ min: 0x202a, max: 0x202e }),
          fc.integer({ min: 0x2066, max: 0x2069 }),
        ),
        wellFormed,
        wellFormed,
        fc.constantFrom(100, 255),
        (cp, before, after, max) => {
          const name = `a${before}${String.fromCharCode(cp)}${after}`;
          expect(nameProblem(name, max)).toBe(codePointLength(name) > max ? 'length' : 'forbidden');
        },
      ),
    );
  });

  it('accepts ordinary names in any script: letters, digits, punctuation, symbols and spaces within the limit', () => {
    const ordinary = fc
      .string({ unit: 'grapheme', minLength: 1, maxLength: 100 })
      .filter((s) => /^[\p{L}\p{M}\p{N}\p{P}\p{S}\p{Zs}\u200c\u200d]+$/u.test(s) && /[\p{L}\p{N}]/u.test(s));
    fc.assert(
      fc.property(ordinary, (name) => {
        expect(nameProblem(name, Math.max(codePointLength(name), 1))).toBeUndefined();
      }),
    );
    for (const name of ['Acme production', 'Zoë’s café', 'لقطة', 'שלום', '犬舎 東京', 'नमस्ते', '🐕‍🦺 Guide dogs']) {
      expect(nameProblem(name, 100)).toBeUndefined();
    }
  });

  it('gives each problem one message naming the field and the limit', () => {
    expect(nameMessage('length', 'name', 100)).toBe('name must be 1 to 100 characters long');
    expect(nameMessage('blank', 'name', 100)).toBe('name must contain a visible character');
    expect(nameMessage('forbidden', 'name', 255)).toMatch(/^name must not contain control characters/);
  });

  it('wants a visible character: names of only white space, marks, format or ignorable characters are blank', () => {
    const invisible = fc.oneof(
      ofCategory(/\p{White_Space}/u).filter((cp) => !/[\p{Cc}\u2028\u2029]/u.test(String.fromCodePoint(cp))),
      ofCategory(/\p{M}/u),
      ofCategory(/\p{Cf}/u).filter((cp) => !/[\u202a-\u202e\u2066-\u2069]/u.test(String.fromCodePoint(cp))),
      ofCategory(/\p{Default_Ignorable_Code_Point}/u).filter(
        (cp) => !/[\p{Cc}\u202a-\u202e\u2066-\u2069]/u.test(String.fromCodePoint(cp)),
      ),
      fc.constantFrom(...BLANK_GRAPHICS),
    );
    fc.assert(
      fc.property(codePointString(invisible, 1, 20), fc.integer({ min: 0x4e00, max: 0x9fff }), (blank, letter) => {
        expect(check(blank)).toBe('blank');
        // One visible character among them makes a name.
        expect(check(blank + String.fromCodePoint(letter))).toBeUndefined();
      }),
    );
  });

  it('counts the characters that render as nothing as blank, alone or mixed with other invisible ones', () => {
    for (const cp of [0x2800, 0x1d159, 0x3164, 0x115f, 0x1160, 0xffa0, 0x180e, 0x2000, 0x200a, 0x2062, 0x3000]) {
      expect(check(String.fromCodePoint(cp))).toBe('blank');
      expect(check(`${String.fromCodePoint(cp)}\u200b${String.fromCodePoint(cp)}`)).toBe('blank');
    }
    // A visible braille pattern is a character like any other.
    expect(check('\u2801')).toBeUndefined();
  });
});

describe('escapeUnsafeText (names printed to a terminal)', () => {
  const anyText = fc.string({ unit: 'binary', maxLength: 60 });

  it('leaves no character a name may not hold, and leaves an acceptable name as it is', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const shown = escapeUnsafeText(text);
        expect(shown).not.toMatch(/[\p{Cc}\p{Cs}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u);
        if (nameProblem(text, 255) === undefined) expect(shown).toBe(text);
      }),
    );
    expect(escapeUnsafeText('evil\u202Egnp.exe\u001b[2J\u0085')).toBe('evil\\u202Egnp.exe\\u001B[2J\\u0085');
  });

  it('keeps JSON text the same value: its escapes are JSON escapes', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-composite', maxLength: 60 }), anyText, (a, b) => {
        const value = { name: a + b, names: [b] };
        expect(JSON.parse(escapeUnsafeText(JSON.stringify(value)))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });
});
