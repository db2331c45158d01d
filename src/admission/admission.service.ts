import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { AuthService } from '../auth/auth.service.js';
import type { AuthResult, Principal } from '../auth/auth.types.js';
import type { RequestAdmission } from '../request-context/request-context.js';
import { requestContext } from '../request-context/request-context.js';
import {
  addressSubject,
  clientAddress,
  keySubject,
  RateLimiter,
  type RateLimitDecision,
  type QuotaRead,
  type RateLimitSubject,
} from '../rate-limit/rate-limiter.js';
import type { RateLimitHeaders, WindowState } from '../rate-limit/rate-limit.windows.js';
import { QuotaThresholds } from '../rate-limit/quota-thresholds.js';
import type { UsageOperation } from '../usage/usage-counts.js';
import { UsageRecorder } from '../usage/usage-recorder.js';

/** What admission decided about one request (docs/api-keys.md, "Admission and rate limits"). */
export interface Admission extends RequestAdmission {
  readonly principal?: Principal;
  readonly subject: RateLimitSubject;
  /** Each window's count after this request, once counted. */
  windows?: WindowState[];
  decision?: 'allowed' | 'limited' | 'banned';
  /** The rate-limit headers every /v1 response carries. */
  headers?: RateLimitHeaders;
  /** Why the request is refused: a 401, a 429, or the 503 of a key that could not be checked. */
  refusal?: Error;
  /** The key's quota as read without counting (uncounted routes: GET /v1/rate_limit). */
  quota?: QuotaRead;
}

/** The refusal of a request without a valid key, and whether it stands over a 429 of its count. */
interface KeyRefusal {
  error: Error;
  overLimits: boolean;
}

/**
 * Admission of a request to a /v1 operation, in one place: who sent it, whom it is counted
 * against, and whether it may go on.
 *
 * 1. The bearer key is verified (AuthService): offline for a missing, malformed or forged key,
 *    else by a cached lookup. Nothing about the client's address decides whether a
 *    well-formed key is looked up, except the failed-lookup budget of version 1 keys.
 * 2. A valid key is counted against the key alone, at its plan's rates: its address never
 *    refuses it, so many keys behind one address (a NAT, an integrator's backend, a freshly
 *    started instance) are each limited by their own plan.
 * 3. A request without a valid key (none, malformed, forged, unknown, revoked or expired) is
 *    counted against its address at the free plan's rates and refused: 429 once the address is
 *    over its limit or banned, else the key's 401.
 * 4. A key that could not be checked (database unavailable) is counted against the address for
 *    the headers and answered 503, never a 429: the limit would not be the client's own.
 *
 * 5. On a route that is not counted (GET /v1/rate_limit), a valid key spends nothing of its
 *    limits: it takes one read from its budget of such reads (429 once spent), and its quota is
 *    read as its next counted request would find it. Steps 3 and 4 are as above.
 *
 * Every request counted against a key is also recorded in the key's usage (UsageRecorder: in
 * memory, written in batches), under its operation, with whether it is refused 429; and its day
 * window's count is shown to QuotaThresholds (in memory, announced in batches at 80% and 100%).
 *
 * The admission is stored once in the request context, where the access log, metrics and
 * idempotency read the principal.
 */
@Injectable()
export class AdmissionService {
  constructor(
    private readonly auth: AuthService,
    private readonly limiter: RateLimiter,
    private readonly usage: UsageRecorder,
    private readonly thresholds: QuotaThresholds,
  ) {}

  /**
   * `counted: false`: a valid key is not counted against its limits (step 5). `operation`: what
   * the request's usage is recorded under (`other`: a /v1 path no operation answers).
   * The admission is returned at once, not as a promise, when neither the key's check nor its
   * count needs I/O (a cached key spending its lease, a refusal without a lookup): most
   * requests of a key in use (bench scenario listPetsManyKeys, ledger: event loop).
   */
  admit(
    req: Request,
    { counted = true, operation = 'other' }: { counted?: boolean; operation?: UsageOperation } = {},
  ): Admission | Promise<Admission> {
    // The client's address decides only for a key not cached or refused: a cached valid key,
    // most requests, never computes it (bench scenario listPetsManyKeys).
    let address: string | undefined;
    const addressOf = () => (address ??= clientAddress(req));
    let verified: AuthResult | Promise<AuthResult>;
    try {
      verified = this.auth.verify(req.headers.authorization, addressOf);
    } catch (err) {
      return this.unchecked(req, addressOf(), err as Error, operation);
    }
    if (verified instanceof Promise) {
      return verified.then(
        (result) => this.admitVerified(req, addressOf, result, counted, operation),
        (err: unknown) => this.unchecked(req, addressOf(), err as Error, operation),
      );
    }
    return this.admitVerified(req, addressOf, verified, counted, operation);
  }

  private admitVerified(
    req: Request,
    addressOf: () => string,
    verified: AuthResult,
    counted: boolean,
    operation: UsageOperation,
  ): Admission | Promise<Admission> {
    if (verified.ok) {
      const { principal } = verified;
      const admission: Admission = { principal, subject: keySubject(principal) };
      return counted ? this.count(req, admission, operation) : this.readQuota(req, admission);
    }
    return this.count(req, { subject: addressSubject(addressOf()) }, operation, {
      error: verified.error,
      overLimits: false,
    });
  }

  /** A key that could not be checked (step 4): counted against its address, refused with the check's error. */
  private unchecked(
    req: Request,
    address: string,
    err: Error,
    operation: UsageOperation,
  ): Admission | Promise<Admission> {
    return this.count(req, { subject: addressSubject(address) }, operation, { error: err, overLimits: true });
  }

  private async readQuota(req: Request, admission: Admission): Promise<Admission> {
    requestContext(req).admission = admission;
    admission.refusal = this.limiter.admitRead(admission.subject);
    if (admission.refusal === undefined) {
      admission.quota = await this.limiter.read(admission.subject);
      admission.headers = admission.quota.headers;
    }
    return admission;
  }

  /**
   * Counts the request against the admission's subject. `keyRefusal`: the refusal of a request
   * without a valid key, given unless the count refuses it (a 401: a 429 comes first), or
   * whatever the count (`overLimits`: the 503 of a key that could not be checked).
   */
  private count(
    req: Request,
    admission: Admission,
    operation: UsageOperation,
    keyRefusal?: KeyRefusal,
  ): Admission | Promise<Admission> {
    requestContext(req).admission = admission;
    const decision = this.limiter.count(admission.subject);
    return decision instanceof Promise
      ? decision.then((d) => this.counted(admission, d, operation, keyRefusal))
      : this.counted(admission, decision, operation, keyRefusal);
  }

  private counted(
    admission: Admission,
    decision: RateLimitDecision,
    operation: UsageOperation,
    keyRefusal: KeyRefusal | undefined,
  ): Admission {
    admission.windows = decision.result.windows;
    admission.decision = decision.result.outcome;
    admission.headers = decision.headers;
    admission.refusal = keyRefusal?.overLimits ? keyRefusal.error : (decision.refusal ?? keyRefusal?.error);
    if (admission.principal !== undefined) {
      this.usage.record(admission.principal.keyId, operation, decision.nowMs, decision.result.outcome !== 'allowed');
      this.thresholds.see(admission.principal.keyId, decision.result.windows);
    }
    return admission;
  }
}
