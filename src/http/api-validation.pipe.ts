import { ArgumentMetadata, Injectable, ValidationError, ValidationPipe } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import { ApiError, ErrorDetail } from '../errors/api-error.js';

/**
 * The global ValidationPipe, speaking the contract's error codes: a bad body is 400
 * `validation_failed`, a bad query or path parameter 400 `invalid_parameter`, an unexpected
 * one 400 `unknown_parameter`; each names the field in `details`.
 *
 * Unknown keys are refused before class-transformer sees the object: a `__proto__` or
 * `constructor` key must never reach an assignment.
 */
@Injectable()
export class ApiValidationPipe extends ValidationPipe {
  private readonly knownFields = new WeakMap<object, Set<string>>();
  /** Accepted query strings per DTO class, keyed by their parameters (see validQuery). */
  private readonly acceptedQueries = new WeakMap<object, Map<string, object>>();

  constructor() {
    super({
      transform: true,
      whitelist: true,
      forbidNonWhitelisted: true,
      forbidUnknownValues: true,
      stopAtFirstError: true,
      validationError: { target: false, value: false },
      exceptionFactory: (errors: ValidationError[]) => errors,
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const { type, metatype } = metadata;
    if (!metatype || !this.toValidate(metadata) || (type !== 'body' && type !== 'query')) {
      return value;
    }
    if (type === 'body' && value === undefined) {
      throw new ApiError(400, 'validation_failed', 'A JSON request body is required.');
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new ApiError(400, 'validation_failed', 'The request body must be a JSON object.');
    }
    const known = this.fieldsOf(metatype);
    const unknown = Object.keys(value).filter((k) => !known.has(k));
    if (unknown.length > 0) {
      const what = type === 'body' ? 'field' : 'parameter';
      throw new ApiError(
        400,
        type === 'body' ? 'validation_failed' : 'unknown_parameter',
        `Unknown ${what}${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}.`,
        unknown.map((field) => ({ field, message: `${field} is not an accepted ${what}` })),
      );
    }
    const memoKey = type === 'query' ? queryKey(value as Record<string, unknown>) : undefined;
    if (memoKey !== undefined) {
      const accepted = this.acceptedQueries.get(metatype)?.get(memoKey);
      if (accepted) return Object.assign(new (metatype as new () => object)(), accepted);
    }
    try {
      const dto = (await super.transform(value, metadata)) as object;
      if (memoKey !== undefined) this.remember(metatype, memoKey, dto);
      return dto;
    } catch (err) {
      if (!Array.isArray(err)) throw err;
      const details = flatten(err as ValidationError[]);
      const code = type === 'body' ? 'validation_failed' : 'invalid_parameter';
      throw new ApiError(400, code, details.map((d) => d.message).join('; ') || 'Invalid request.', details);
    }
  }

  /**
   * Query validation is a pure function of the parameters' text, and the hot paths send the
   * same few queries over and over (`?limit=20`), so an accepted query's DTO is remembered
   * (query DTOs must therefore validate with pure rules only, as class-validator's are)
   * and copied: class-transformer and class-validator cost about 30 µs per request (profiled
   * under `npm run bench`). Refusals are not remembered; each gets the full validation and
   * its own error. The memo is small and bounded: it is emptied when full.
   */
  private remember(metatype: object, key: string, dto: object): void {
    let accepted = this.acceptedQueries.get(metatype);
    if (!accepted) this.acceptedQueries.set(metatype, (accepted = new Map()));
    const copy: Record<string, unknown> = { ...dto };
    // Only plain values are shared between requests, never an object a handler could change.
    if (Object.values(copy).some((v) => typeof v === 'object' && v !== null)) return;
    if (accepted.size >= MAX_REMEMBERED_QUERIES) accepted.clear();
    accepted.set(key, copy);
  }

  private fieldsOf(metatype: object): Set<string> {
    let fields = this.knownFields.get(metatype);
    if (!fields) {
      const metas = getMetadataStorage().getTargetValidationMetadatas(metatype as new () => object, '', true, false);
      fields = new Set(metas.map((m) => m.propertyName));
      this.knownFields.set(metatype, fields);
    }
    return fields;
  }
}

const MAX_REMEMBERED_QUERIES = 1000;
const MAX_QUERY_KEY_LENGTH = 512;

/**
 * The memo key of a parsed query: its names and values in order, when every value is a single
 * string (a repeated parameter arrives as an array and always takes the full path).
 */
function queryKey(query: Record<string, unknown>): string | undefined {
  let key = '';
  for (const name of Object.keys(query)) {
    const v = query[name];
    if (typeof v !== 'string') return undefined;
    key += `${name.length}:${name}=${v.length}:${v};`;
    if (key.length > MAX_QUERY_KEY_LENGTH) return undefined;
  }
  return key;
}

function flatten(errors: ValidationError[], prefix = ''): ErrorDetail[] {
  return errors.flatMap((e) => {
    const field = prefix + e.property;
    const own = Object.values(e.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...flatten(e.children ?? [], `${field}.`)];
  });
}
