import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { chromium, type Browser, type Page } from 'playwright-core';
import request from 'supertest';
import { AdminServer } from '../../src/admin/admin.server.js';
import { AdminTokensService } from '../../src/admin-tokens/admin-tokens.service.js';
import { UsageRecorder } from '../../src/usage/usage-recorder.js';
import { TEST_ACTOR } from '../support/api-keys.js';
import { startTestApp } from '../support/app.js';
import { createTestDatabase, preferredDatabaseKind, type TestDatabase } from '../support/databases.js';
import { describeIf } from '../support/describe-if.js';

const CHROMIUM = '/usr/bin/chromium';
/** Screenshots go to docs/images with UPDATE_SCREENSHOTS=1, else to .tmp. */
const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join('docs', 'images') : join('.tmp', 'console-screenshots');

interface AxeResult {
  violations: { id: string; impact: string | null; help: string; nodes: { target: unknown }[] }[];
}

/** axe-core's serious and critical violations on the page as it is now. */
async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
  const result = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: () => Promise<unknown> } }).axe;
    return (await axe.run()) as AxeResult;
  });
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${JSON.stringify(v.nodes.map((n) => n.target))})`);
}

/** Presses Tab until the focused element matches `selector` (keyboard only, as an operator would). */
async function tabTo(page: Page, selector: string, limit = 60): Promise<void> {
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press('Tab');
    if (
      await page
        .locator(selector)
        .first()
        .evaluate((el) => el === el.ownerDocument.activeElement)
    )
      return;
  }
  throw new Error(`Tab never reached ${selector}`);
}

/**
 * The operator console in Debian's Chromium, headless, with the keyboard only: sign-in, issuing a
 * key (its secret seen once), using it on the public API, its usage after a flush, changing its
 * scopes, revoking it (confirmed), and the audit page listing all of it; axe-core finds no serious
 * or critical violation on any page.
 */
describeIf(existsSync(CHROMIUM), `${CHROMIUM} is missing (apt-get install chromium)`)('the console in Chromium', () => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  let browser: Browser;
  let page: Page;
  let token: string;
  let origin: string;
  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `console-${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    db = await createTestDatabase(preferredDatabaseKind());
    app = await startTestApp(db, { env: { ADMIN_PORT: '0', USAGE_FLUSH_MS: '600000' } });
    ({ token } = await app.get(AdminTokensService).create('ops-dana', TEST_ACTOR));
    origin = `http://127.0.0.1:${app.get(AdminServer).port()}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    // The CSP refuses injected scripts: axe is injected with the policy bypassed (the header itself is checked by the HTTP tests).
    const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await db?.drop();
  });

  it('signs in, issues, uses, changes and revokes a key with the keyboard alone, each page accessible', async () => {
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(e.message));

    await page.goto(`${origin}/admin/keys/new`);
    expect(new URL(page.url()).pathname).toBe('/admin/sign-in');
    expect(await seriousViolations(page)).toEqual([]);
    await shot('sign-in');
    await tabTo(page, 'input[name=token]');
    await page.keyboard.type(token);
    await Promise.all([page.waitForURL(`${origin}/admin/keys/new`), page.keyboard.press('Enter')]);

    // Issue a key: name typed, plan chosen, scope pets:write unticked, submitted with the keyboard.
    expect(await seriousViolations(page)).toEqual([]);
    await shot('issue');
    await tabTo(page, '#name');
    await page.keyboard.type('Browser shop');
    await tabTo(page, '#plan');
    await page.keyboard.press('ArrowDown'); // free -> pro
    await tabTo(page, 'button[type=submit]:not(header *)');
    await Promise.all([page.waitForLoadState('load'), page.keyboard.press('Enter')]);
    await page.waitForSelector('#secret');
    const secret = (await page.textContent('#secret'))?.trim() as string;
    expect(secret).toMatch(/^ask_/);
    expect(await page.isVisible('button[data-copy=secret]')).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    await shot('issued');

    // The secret works on the public API, and its usage shows once flushed.
    for (let i = 0; i < 3; i++) {
      expect((await request(app.getHttpServer()).get('/v1/pets').set('Authorization', `Bearer ${secret}`)).status).toBe(
        200,
      );
    }
    expect(await app.get(UsageRecorder).flush()).toBe(true);
    await Promise.all([page.waitForLoadState('load'), page.click('text=Open the key’s page')]);
    const keyUrl = page.url();
    expect(await page.content()).not.toContain(secret);
    await page.waitForSelector('#usage-hourly');
    expect(await page.locator('.chart[role=img]').first().getAttribute('aria-label')).toMatch(/^Usage/);
    // uPlot drew the chart from the table.
    await page.waitForSelector('.chart canvas');
    expect(await page.locator('#usage-hourly tbody td.num').first().textContent()).toBe('3');
    expect(await seriousViolations(page)).toEqual([]);
    await shot('key');

    // Change its scopes: pets:write unticked (pets:read stays), saved with the keyboard.
    await page.focus('#name');
    await tabTo(page, 'input[name=scopes][value="pets:write"]');
    await page.keyboard.press('Space');
    await tabTo(page, 'form[action$="/save"] button');
    await Promise.all([page.waitForURL(/done=saved/), page.keyboard.press('Enter')]);
    expect(await page.textContent('[role=status]')).toBe('Saved.');
    const bearer = { Authorization: `Bearer ${secret}` };
    expect((await request(app.getHttpServer()).post('/v1/pets').set(bearer).send({ name: 'Rex' })).status).toBe(403);
    expect((await request(app.getHttpServer()).get('/v1/pets').set(bearer)).status).toBe(200);

    // Revoke, confirmed in the dialog.
    page.once('dialog', (dialog) => void dialog.accept());
    await page.focus('#overlapSeconds');
    await tabTo(page, 'input[name=confirm]');
    await page.keyboard.press('Space');
    await tabTo(page, 'form[action$="/revoke"] button');
    await Promise.all([page.waitForURL(/done=revoked/), page.keyboard.press('Enter')]);
    expect(await page.textContent('[role=status]')).toContain('The key is revoked');
    expect(page.url()).toBe(`${keyUrl}?done=revoked`);

    // The overview, the list and the audit log.
    await page.goto(`${origin}/admin/`);
    expect(await seriousViolations(page)).toEqual([]);
    await page.waitForSelector('.chart canvas');
    await shot('overview');
    await page.goto(`${origin}/admin/keys`);
    expect(await seriousViolations(page)).toEqual([]);
    await shot('keys');
    await page.goto(`${origin}/admin/audit?actor=ops-dana`);
    const actions = await page.locator('tbody tr td:nth-child(3)').allTextContents();
    expect(actions).toEqual(['key.revoked', 'key.updated', 'key.created']);
    expect(await seriousViolations(page)).toEqual([]);
    await shot('audit');
    expect(errors).toEqual([]);
  });
});
