import { MetricsService } from './metrics.service.js';

/** The value of one sample line of the exposition, or undefined. */
function sampleOf(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

describe('MetricsService', () => {
  it('applies what beforeScrape hooks hold back before rendering, and counts an aborted request as 499', async () => {
    const metrics = new MetricsService();
    const held: [string, string, number | undefined, number][] = [
      ['GET', '/v1/pets', 200, 0.004],
      ['GET', '/v1/pets', undefined, 0.2],
    ];
    metrics.beforeScrape(() => {
      for (const args of held.splice(0)) metrics.observeRequest(...args);
    });
    const count = (text: string, status: string) =>
      sampleOf(text, `http_request_duration_seconds_count{method="GET",route="/v1/pets",status_code="${status}"}`);
    const text = await metrics.render();
    expect(count(text, '200')).toBe(1);
    expect(count(text, '499')).toBe(1);
    expect(
      sampleOf(
        text,
        'http_request_duration_seconds_bucket{le="0.005",method="GET",route="/v1/pets",status_code="200"}',
      ),
    ).toBe(1);
    // Applied once: the next scrape finds nothing more.
    expect(count(await metrics.render(), '200')).toBe(1);
  });

  it('reads the requests in flight at scrape time', async () => {
    const metrics = new MetricsService();
    metrics.requestStarted();
    metrics.requestStarted();
    metrics.requestEnded();
    expect(sampleOf(await metrics.render(), 'http_requests_in_flight')).toBe(1);
  });
});
