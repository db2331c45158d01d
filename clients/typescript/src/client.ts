import createClient, { type Client } from 'openapi-fetch';
import { isInteger, parse, stringify } from 'lossless-json';
import { AnimalStoreError, errorOf, rateLimitOf, retryAfterSecondsOf, type RateLimitState } from './errors.js';
import type { components, operations, paths } from './generated/schema.js';
import { linkTargets } from './link.js';
import { abortableSleep, abortReason, DEFAULT_RETRY, retryDelayMs, type RetryOptions } from './retry.js';

/** The API's shapes, all from the types generated from its OpenAPI document. */
export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];
export type ListPetsQuery = NonNullable<operations['listPets']['parameters']['query']>;
/** The API key's plan, windows (`minute`, `day`: limit, remaining, reset in Unix seconds) and ban. */
export type RateLimit = components['schemas']['RateLimit'];
/** The answer of revokeCredentials: how many strings were received, never which were keys. */
export type CredentialsRevocationReceipt = components['schemas']['CredentialsRevocationReceipt'];

/** One page of listPets, and the query of the next one (from `Link: rel="next"`). */
export interface PetsPage {
  pets: Pet[];
  /** Pass it to listPets for the next page; undefined on the last page. */
  next: ListPetsQuery | undefined;
  rateLimit: RateLimitState | undefined;
}

/** What the client says, once, when it calls a deprecated operation. */
export interface DeprecationNotice {
  operation: 'getPet';
  /** When the operation stops working (its Sunset header): 410 `gone` from then on. */
  sunset: Date;
  /** The successor the service names (Link rel="successor-version"), when it does. */
  successor: string | undefined;
  message: string;
}

export interface AnimalStoreClientOptions {
  /** The API's base URL, ending in the version segment: `https://api.example.com/v1`. */
  baseUrl: string;
  /** An API key of the service (`ask_…`). */
  apiKey: string;
  /** The fetch to use (default: globalThis.fetch). */
  fetch?: typeof globalThis.fetch;
  retry?: RetryOptions;
  /** How the client waits between attempts (default: a timer that the call's signal aborts). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Source of the backoff's jitter, in [0, 1) (default Math.random). */
  random?: () => number;
  /** Makes the Idempotency-Key of each new createPet (default crypto.randomUUID). */
  newIdempotencyKey?: () => string;
  /** Told once per client when a deprecated operation is called (default console.warn). */
  onDeprecation?: (notice: DeprecationNotice) => void;
}

export interface CallOptions {
  /** Aborts the call, its waits between attempts included. */
  signal?: AbortSignal;
}

export interface CreatePetOptions extends CallOptions {
  /**
   * The Idempotency-Key of this create. By default a new UUID per createPet call, sent on each
   * of its attempts; give your own to make a create safe to repeat across calls (or processes).
   */
  idempotencyKey?: string;
}

type Attempt = (signal: AbortSignal | undefined) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

/**
 * The official client of the Animal Store API (v1).
 *
 * - Identifiers are `bigint`, in and out: bodies are written and read with lossless-json, so
 *   ids up to 9223372036854775807 stay exact (JSON.parse would round them).
 * - 429 and 503 answers (and a 409 `idempotency_key_in_flight`) are retried after
 *   Retry-After, then with exponential backoff and jitter, up to `retry.maxAttempts`;
 *   connection errors too. Every wait is abortable with the call's signal.
 * - createPet sends an Idempotency-Key, made once per call and reused on every attempt, so a
 *   retried create never stores the animal twice.
 * - Errors are AnimalStoreError: code, status, message, details, request id, rate-limit state;
 *   a key without the scope an operation needs gets an InsufficientScopeError.
 */
export class AnimalStoreClient {
  /** The rate-limit state the headers of the last answer described. */
  lastRateLimit: RateLimitState | undefined;

  private readonly api: Client<paths>;
  private readonly retry: Required<RetryOptions>;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly random: () => number;
  private readonly newIdempotencyKey: () => string;
  private readonly onDeprecation: (notice: DeprecationNotice) => void;
  private deprecationTold = false;

  constructor(options: AnimalStoreClientOptions) {
    const fetchImpl = options.fetch ?? ((input: Request) => globalThis.fetch(input));
    this.api = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      fetch: (request: Request) => fetchImpl(request),
      headers: { Authorization: `Bearer ${options.apiKey}`, Accept: 'application/json' },
      // bigint ids as exact JSON numbers (JSON.stringify throws on a bigint).
      bodySerializer: (body: unknown) => stringify(body) as string,
    });
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.sleep = options.sleep ?? abortableSleep;
    this.random = options.random ?? Math.random;
    this.newIdempotencyKey = options.newIdempotencyKey ?? (() => globalThis.crypto.randomUUID());
    this.onDeprecation = options.onDeprecation ?? ((notice) => console.warn(notice.message));
  }

  /** One page of animals, ordered by id (listPets). `page.next` is the query of the next page. */
  async listPets(query: ListPetsQuery = {}, options: CallOptions = {}): Promise<PetsPage> {
    const { data, response } = await this.call(options.signal, true, (signal) =>
      this.api.GET('/pets', { params: { query }, parseAs: 'text', signal }),
    );
    return {
      pets: parseLossless(data) as Pet[],
      next: nextPageQuery(response.headers.get('link')),
      rateLimit: rateLimitOf(response.headers),
    };
  }

  /**
   * The API key's plan, each window's limit, remaining requests and reset, and a ban if any
   * (getRateLimit), read without spending a request: the service does not count it against the
   * key's limits. Any valid key may read it.
   */
  async rateLimit(options: CallOptions = {}): Promise<RateLimit> {
    const { data } = await this.call(options.signal, true, (signal) =>
      this.api.GET('/rate_limit', { parseAs: 'text', signal }),
    );
    return JSON.parse(data) as RateLimit;
  }

  /**
   * Reports API keys found exposed (revokeCredentials): each that is a live key of the service is
   * revoked and refused everywhere within seconds. 1 to 1,000 strings; the answer is only how many
   * were received. The service needs no key for it, and reporting a key twice changes nothing, so
   * a retried report is safe.
   */
  async revokeCredentials(
    credentials: readonly string[],
    options: CallOptions = {},
  ): Promise<CredentialsRevocationReceipt> {
    const { data } = await this.call(options.signal, true, (signal) =>
      this.api.POST('/credentials/revoke', { body: { credentials: [...credentials] }, parseAs: 'text', signal }),
    );
    return JSON.parse(data) as CredentialsRevocationReceipt;
  }

  /** Every page of listPets, following `Link: rel="next"` until the last. */
  async *pages(query: Omit<ListPetsQuery, 'cursor'> = {}, options: CallOptions = {}): AsyncGenerator<PetsPage> {
    let next: ListPetsQuery | undefined = query;
    while (next !== undefined) {
      const page = await this.listPets(next, options);
      yield page;
      next = page.next;
    }
  }

  /** Every animal of every page, in id order: `for await (const pet of client.allPets())`. */
  async *allPets(query: Omit<ListPetsQuery, 'cursor'> = {}, options: CallOptions = {}): AsyncGenerator<Pet> {
    for await (const page of this.pages(query, options)) yield* page.pets;
  }

  /** Adds an animal (createPet); safe to retry: see CreatePetOptions.idempotencyKey. */
  async createPet(pet: NewPet, options: CreatePetOptions = {}): Promise<Pet> {
    // The service prefers the IETF draft's quoted form; one key for every attempt of this create.
    const idempotencyKey = quotedKey(options.idempotencyKey ?? this.newIdempotencyKey());
    const { data } = await this.call(options.signal, true, (signal) =>
      this.api.POST('/pets', {
        body: pet,
        params: { header: { 'Idempotency-Key': idempotencyKey } },
        parseAs: 'text',
        signal,
      }),
    );
    return parseLossless(data) as Pet;
  }

  /**
   * Fetches one animal (getPet). Deprecated by the service: removed on its Sunset date (410
   * `gone` from then on); use listPets with the status filter. Says so once per client.
   */
  async getPet(petId: bigint, options: CallOptions = {}): Promise<Pet> {
    const { data } = await this.call(options.signal, true, (signal) =>
      this.api.GET('/pets/{petId}', { params: { path: { petId } }, parseAs: 'text', signal }).then((result) => {
        this.noteDeprecation(result.response);
        return result;
      }),
    );
    return parseLossless(data) as Pet;
  }

  private noteDeprecation(response: Response): void {
    const sunset = response.headers.get('sunset');
    if (this.deprecationTold || sunset === null) return;
    this.deprecationTold = true;
    const when = new Date(sunset);
    const successor = linkTargets(response.headers.get('link'), 'successor-version')[0];
    this.onDeprecation({
      operation: 'getPet',
      sunset: when,
      successor,
      message:
        `Animal Store API: getPet (GET /pets/{petId}) is deprecated and will be removed on ${when.toUTCString()} ` +
        `(410 gone from then on); use listPets with the status filter${successor ? ` (${successor})` : ''}.`,
    });
  }

  /**
   * Runs one call's attempts: returns the first 2xx answer, throws an AnimalStoreError for an
   * answer not worth retrying or when the attempts are spent, and the connection error itself
   * after the last attempt. Each refusal's wait comes from retryDelayMs.
   */
  private async call(
    signal: AbortSignal | undefined,
    retryConnectionErrors: boolean,
    attempt: Attempt,
  ): Promise<{ data: string; response: Response }> {
    for (let failures = 0; ;) {
      if (signal?.aborted) throw abortReason(signal);
      let result: Awaited<ReturnType<Attempt>>;
      try {
        result = await attempt(signal);
      } catch (err) {
        if (signal?.aborted) throw abortReason(signal);
        failures += 1;
        if (!retryConnectionErrors || !isConnectionError(err) || failures >= this.retry.maxAttempts) throw err;
        await this.sleep(retryDelayMs(failures, undefined, this.retry, this.random), signal);
        continue;
      }
      const { response } = result;
      this.lastRateLimit = rateLimitOf(response.headers) ?? this.lastRateLimit;
      if (response.ok) return { data: result.data as string, response };
      const error = errorOf(response, result.error);
      failures += 1;
      if (!isRetryable(error) || failures >= this.retry.maxAttempts) throw error;
      const retryAfter = retryAfterSecondsOf(response.headers);
      const retryAfterMs = retryAfter === undefined ? undefined : retryAfter * 1000;
      if (retryAfterMs !== undefined && retryAfterMs > this.retry.maxRetryAfterMs) throw error;
      await this.sleep(retryDelayMs(failures, retryAfterMs, this.retry, this.random), signal);
    }
  }
}

/** Refusals that say "not processed, try again later". */
function isRetryable(error: AnimalStoreError): boolean {
  return (
    error.status === 429 || error.status === 503 || (error.status === 409 && error.code === 'idempotency_key_in_flight')
  );
}

/**
 * fetch rejects with a TypeError when the connection fails (refused, reset, DNS). Compared by
 * name: the error may come from another realm (a test runner's sandbox) than this module's.
 */
function isConnectionError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as Error).name === 'TypeError';
}

/**
 * JSON with every integer as a bigint: the only integers of Pet and Pets are int64 ids, which
 * JSON.parse would round above 2^53. Other numbers stay numbers.
 */
function parseLossless(text: string): unknown {
  return parse(text, undefined, (value: string) => (isInteger(value) ? BigInt(value) : Number(value)));
}

/** The query of the next page, from `Link: <…/pets?limit=…&cursor=…>; rel="next"`. */
function nextPageQuery(link: string | null): ListPetsQuery | undefined {
  const target = linkTargets(link, 'next')[0];
  if (target === undefined) return undefined;
  // The link is built from the service's public base URL, which may not be the URL this client
  // talks to (a proxy, a tunnel): its query is applied to the client's own base URL, so the API
  // key never goes to a host the caller did not name.
  const params = new URL(target, 'http://placeholder.invalid').searchParams;
  const query: ListPetsQuery = {};
  const limit = params.get('limit');
  const status = params.get('status');
  const cursor = params.get('cursor');
  if (limit !== null) query.limit = Number(limit);
  if (status !== null) query.status = status as PetStatus;
  if (cursor !== null) query.cursor = cursor;
  return query;
}

/** A key as an RFC 8941 sf-string, the form the service prefers. */
function quotedKey(key: string): string {
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw new TypeError('An Idempotency-Key is 1 to 255 visible ASCII characters (no spaces).');
  }
  return `"${key.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}
