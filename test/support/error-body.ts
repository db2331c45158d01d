import type { IncomingHttpHeaders } from 'node:http';

/** An HTTP answer as any of the tests' clients hold it: supertest, raw-http, node:http. */
export interface AnswerLike {
  status: number;
  headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>;
  /** Parsed JSON (supertest), or the raw text or bytes. */
  body: unknown;
}

/**
 * The one error body of the service (docs/api.md, "Errors"): JSON, exactly `code`, a non-empty
 * `message`, `status` equal to the HTTP status, `requestId` equal to the response's
 * X-Request-Id, and `details` only as field/message pairs. Returns the body for further checks.
 */
export function expectErrorBody(
  res: AnswerLike,
  status: number,
  code: string,
  message: RegExp = /\S/,
): {
  code: string;
  message: string;
  status: number;
  requestId: string;
  details?: { field: string; message: string }[];
} {
  expect(res.status).toBe(status);
  const requestId = res.headers['x-request-id'];
  expect(requestId).toEqual(expect.stringMatching(/^[A-Za-z0-9._-]{1,128}$/));
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = (
    typeof res.body === 'string' || Buffer.isBuffer(res.body) ? JSON.parse(res.body.toString()) : res.body
  ) as ReturnType<typeof expectErrorBody>;
  const details = body?.details === undefined ? {} : { details: expect.arrayContaining([]) as unknown };
  expect(body).toEqual({ code, message: expect.stringMatching(message), status, requestId, ...details });
  for (const d of body.details ?? [])
    expect(d).toEqual({ field: expect.any(String), message: expect.stringMatching(/\S/) });
  return body;
}

/**
 * An error answer's body checked against the one Error shape (exactly its keys, `status` equal
 * to the HTTP status, `requestId` equal to the X-Request-Id header, a message that leaks
 * nothing): the problem found, or the parsed body. For property tests, which report a problem
 * rather than assert.
 */
export function errorBodyProblem(
  status: number,
  text: string,
  requestIdHeader: string | string[] | undefined,
): { problem: string } | { body: Record<string, unknown> } {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { problem: `error body is not JSON: ${text.slice(0, 200)}` };
  }
  const keys = Object.keys(body).sort().join(',');
  if (keys !== 'code,message,requestId,status' && keys !== 'code,details,message,requestId,status')
    return { problem: `error body keys ${keys}` };
  if (body.status !== status) return { problem: `body status ${String(body.status)} on HTTP ${status}` };
  if (typeof requestIdHeader !== 'string' || body.requestId !== requestIdHeader)
    return { problem: `body requestId ${String(body.requestId)} with X-Request-Id ${String(requestIdHeader)}` };
  if (typeof body.message !== 'string' || !/\S/.test(body.message)) return { problem: 'empty message' };
  if (/\bat .+:\d+:\d+|prisma|SELECT |node_modules|TypeError|RangeError/i.test(body.message)) {
    return { problem: `message leaks internals: ${body.message}` };
  }
  return { body };
}
