import { ArgumentMetadata, Injectable, ValidationError, ValidationPipe } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { ApiError, ErrorDetail } from '../errors/api-error.js';
import { validatedProperties } from '../library-internals/index.js';
import { unknownNamesError } from './unknown-names.js';

/**
 * The global ValidationPipe, speaking the error codes of docs/api.md ("Errors"): a bad body is 400
 * `validation_failed`, a bad query or path parameter 400 `invalid_parameter`, an unexpected
 * one 400 `unknown_parameter`; each names the field in `details`.
 *
 * Unknown keys are refused before class-transformer sees the object: a `__proto__` or
 * `constructor` key must never reach an assignment.
 */
const PURE_QUERY = Symbol('animal-store.pure-query');

/**
 * Marks a query DTO whose validation is a pure function of the parameters' text (class-validator's
 * own rules, no custom validator that reads the clock, the database or anything else), so the
 * validation pipe may remember the queries it accepted (see ApiValidationPipe.remembered). A DTO
 * without the mark is validated afresh on every request.
 */
export function PureQuery(): ClassDecorator {
  return (target) => {
    (target as unknown as Record<symbol, boolean>)[PURE_QUERY] = true;
  };
}

@Injectable()
export class ApiValidationPipe extends ValidationPipe {
  private readonly knownFields = new WeakMap<object, Set<string>>();
  /** Accepted queries of @PureQuery DTOs, per class: their plain values by query (queryKey). */
  private readonly acceptedQueries = new WeakMap<object, LRUCache<string, Readonly<Record<string, unknown>>>>();

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
      throw new ApiError('validation_failed', 'A JSON request body is required.');
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new ApiError('validation_failed', 'The request body must be a JSON object.');
    }
    const known = this.fieldsOf(metatype);
    const unknown = Object.keys(value).filter((k) => !known.has(k));
    if (unknown.length > 0) {
      throw type === 'body' ? unknownNamesError('field', unknown) : unknownNamesError('parameter', unknown);
    }
    const memo = type === 'query' ? this.memoOf(metatype) : undefined;
    const memoKey = memo && queryKey(value as Record<string, unknown>);
    if (memoKey !== undefined) {
      const accepted = memo!.get(memoKey);
      if (accepted) return Object.assign(new (metatype as new () => object)(), accepted);
    }
    try {
      const dto = (await super.transform(value, metadata)) as object;
      if (memoKey !== undefined) remember(memo!, memoKey, dto);
      return dto;
    } catch (err) {
      if (!Array.isArray(err)) throw err;
      const details = flatten(err as ValidationError[]);
      const code = type === 'body' ? 'validation_failed' : 'invalid_parameter';
      throw new ApiError(code, details.map((d) => d.message).join('; ') || 'Invalid request.', { details });
    }
  }

  /**
   * The memo of a @PureQuery DTO. The hot paths send the same few queries over and over
   * (`?limit=20`), and class-transformer + class-validator cost CPU on every one (bench
   * scenario listPets, the ledger's validation line). Only accepted queries are
   * remembered (each refusal gets the full validation and its own error), at most
   * MAX_REMEMBERED_QUERIES per DTO, least recently used dropped.
   */
  private memoOf(metatype: object): LRUCache<string, Readonly<Record<string, unknown>>> | undefined {
    if ((metatype as Record<symbol, unknown>)[PURE_QUERY] !== true) return undefined;
    let memo = this.acceptedQueries.get(metatype);
    if (!memo) this.acceptedQueries.set(metatype, (memo = new LRUCache({ max: MAX_REMEMBERED_QUERIES })));
    return memo;
  }

  private fieldsOf(metatype: object): Set<string> {
    let fields = this.knownFields.get(metatype);
    if (!fields) {
      fields = validatedProperties(metatype as new () => object);
      this.knownFields.set(metatype, fields);
    }
    return fields;
  }
}

const MAX_REMEMBERED_QUERIES = 1000;
const MAX_QUERY_KEY_LENGTH = 512;

/** Remembers an accepted query's values; only when each is a plain value no handler can change. */
function remember(memo: LRUCache<string, Readonly<Record<string, unknown>>>, key: string, dto: object): void {
  const values: Record<string, unknown> = { ...dto };
  if (Object.values(values).some((v) => typeof v === 'object' && v !== null)) return;
  memo.set(key, Object.freeze(values));
}

/**
 * The memo key of a parsed query: its names and values in order, when every value is a single
 * string (a repeated parameter arrives as an array and always takes the full path) and the
 * whole is short.
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
