import fc from 'fast-check';
import { BLANK_GRAPHICS, codePointLength, NAME_MAX_CODE_POINTS, nameProblem } from './pet-name.js';

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
const wellFormed = fc.array(trickyCodePoint, { maxLength: 300 }).map((cps) => String.fromCodePoint(...cps));
const visibleLetter = fc.integer({ min: 0x61, max: 0x7a }).map((c) => String.fromCharCode(c));

/** Every code point of a general category, as a JavaScript regex sees it. */
const ofCategory = (re: RegExp) =>
  fc
    .integer({ min: 0, max: 0x10ffff })
    .filter((cp) => (cp < 0xd800 || cp > 0xdfff) && re.test(String.fromCodePoint(cp)));

describe('pet names', () => {
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
        wellFormed.filter((s) => nameProblem(`a${s}`) !== 'forbidden'),
        (first, rest) => {
          const name = first + rest;
          const length = Array.from(name).length;
          expect(nameProblem(name) === 'length').toBe(length > NAME_MAX_CODE_POINTS);
        },
      ),
    );
    expect(nameProblem('a\uFE0F'.repeat(200))).toBe('length');
    expect(nameProblem('a'.repeat(254) + '\uFE0F'.repeat(2))).toBe('length');
    expect(nameProblem('a' + '\uFE0E'.repeat(255))).toBe('length');
    expect(nameProblem('a'.repeat(254) + '\uFE0F')).toBeUndefined();
    expect(nameProblem('')).toBe('length');
  });

  it('refuses every control character (\\p{Cc}) and every unpaired surrogate, anywhere in a name', () => {
    const control = fc
      .oneof(fc.integer({ min: 0, max: 0x1f }), fc.integer({ min: 0x7f, max: 0x9f }))
      .map((c) => String.fromCharCode(c));
    const lone = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
    fc.assert(
      fc.property(
        fc.oneof(control, lone),
        fc.string({ maxLength: 20 }),
        fc.string({ maxLength: 20 }),
        (bad, before, after) => {
          // A lone surrogate next to another may pair with it: only unpaired ones are refused.
          const name = `R${before.replace(/[\ud800-\udfff]/g, '')}${bad}${after.replace(/[\ud800-\udfff]/g, '')}x`;
          expect(nameProblem(name)).toBe(name.length > NAME_MAX_CODE_POINTS ? 'length' : 'forbidden');
        },
      ),
    );
    fc.assert(
      fc.property(ofCategory(/\p{Cc}/u), (cp) => expect(nameProblem(`a${String.fromCodePoint(cp)}`)).toBe('forbidden')),
    );
  });

  it('refuses line separators and the bidirectional embedding, override and isolate controls', () => {
    for (const cp of [0x2028, 0x2029, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069]) {
      expect(nameProblem(`Rex${String.fromCharCode(cp)}`)).toBe('forbidden');
    }
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
      fc.property(
        fc.array(invisible, { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 0x4e00, max: 0x9fff }),
        (cps, letter) => {
          const blank = String.fromCodePoint(...cps);
          expect(nameProblem(blank)).toBe('blank');
          // One visible character among them makes a name.
          expect(nameProblem(blank + String.fromCodePoint(letter))).toBeUndefined();
        },
      ),
    );
  });

  it('counts the characters that render as nothing as blank, alone or mixed with other invisible ones', () => {
    for (const cp of [0x2800, 0x1d159, 0x3164, 0x115f, 0x1160, 0xffa0, 0x180e, 0x2000, 0x200a, 0x2062, 0x3000]) {
      expect(nameProblem(String.fromCodePoint(cp))).toBe('blank');
      expect(nameProblem(`${String.fromCodePoint(cp)}\u200b${String.fromCodePoint(cp)}`)).toBe('blank');
    }
    // A visible braille pattern is a character like any other.
    expect(nameProblem('\u2801')).toBeUndefined();
  });
});
