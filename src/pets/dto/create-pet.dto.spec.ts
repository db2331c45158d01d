import fc from 'fast-check';
import { ApiError } from '../../errors/api-error.js';
import { ApiValidationPipe } from '../../http/api-validation.pipe.js';
import { INT64_MAX } from '../../json/int64.js';
import { PET_STATUSES } from '../pet-status.js';
import { CreatePetDto } from './create-pet.dto.js';

const pipe = new ApiValidationPipe();
const validate = (value: unknown) => pipe.transform(value, { type: 'body', metatype: CreatePetDto, data: '' });

const goodName = fc
  .string({ unit: 'grapheme', minLength: 1, maxLength: 120 })
  // Visible, free of control, line-separator and bidirectional characters (src/http/names.ts).
  .filter(
    (s) =>
      /[\p{L}\p{N}\p{P}\p{S}]/u.test(s) &&
      !/[\p{Cc}\p{Cs}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u.test(s) &&
      [...s].length <= 255,
  );
const goodCategory = fc.oneof(
  fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  fc.bigInt({ min: BigInt(Number.MAX_SAFE_INTEGER) + 1n, max: INT64_MAX }),
);
const goodStatus = fc.option(fc.constantFrom(...PET_STATUSES), { nil: undefined });

describe('NewPet body rules', () => {
  it('accepts every well-formed NewPet unchanged', async () => {
    await fc.assert(
      fc.asyncProperty(goodName, goodCategory, goodStatus, async (name, categoryId, status) => {
        const body: Record<string, unknown> = { name, categoryId };
        if (status !== undefined) body.status = status;
        const dto = (await validate(body)) as CreatePetDto;
        expect(dto).toBeInstanceOf(CreatePetDto);
        expect(dto.name).toBe(name);
        expect(dto.categoryId).toBe(categoryId);
        expect(dto.status).toBe(status);
      }),
    );
  });

  it('answers anything else with a 400 validation_failed naming a field, never another error', async () => {
    const anyValue = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.bigInt(), fc.constant(undefined));
    const body = fc.dictionary(
      fc.oneof(
        fc.constantFrom('name', 'categoryId', 'status', 'id', '__proto__', 'constructor'),
        fc.string({ maxLength: 8 }),
      ),
      anyValue,
      { maxKeys: 5 },
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(body, anyValue), async (value) => {
        try {
          const dto = (await validate(value)) as CreatePetDto;
          // Accepted: it must really be a NewPet.
          expect(typeof dto.name).toBe('string');
          expect(/\S/.test(dto.name)).toBe(true);
          expect(BigInt(dto.categoryId) >= 1n && BigInt(dto.categoryId) <= INT64_MAX).toBe(true);
          expect(dto.status === undefined || PET_STATUSES.includes(dto.status)).toBe(true);
          expect(Object.keys(value as object).every((k) => ['name', 'categoryId', 'status'].includes(k))).toBe(true);
        } catch (err) {
          expect(err).toBeInstanceOf(ApiError);
          expect((err as ApiError).status).toBe(400);
          expect((err as ApiError).code).toBe('validation_failed');
        }
      }),
      { numRuns: 500 },
    );
  });

  it('refuses a categoryId that is not a positive int64, whatever its JSON type', async () => {
    const bad = fc.oneof(
      fc.integer({ max: 0 }),
      fc.bigInt({ min: INT64_MAX + 1n, max: INT64_MAX * 4n }),
      fc.double().filter((d) => !Number.isSafeInteger(d) || d < 1),
      fc.string(),
      fc.boolean(),
      fc.constant(null),
    );
    await fc.assert(
      fc.asyncProperty(bad, async (categoryId) => {
        await expect(validate({ name: 'Rex', categoryId })).rejects.toMatchObject({
          status: 400,
          details: [expect.objectContaining({ field: 'categoryId' })],
        });
      }),
    );
  });
});
