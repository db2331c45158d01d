import fc from 'fast-check';
import { safeNext } from './console-paths.js';

describe('where sign-in sends the browser back to', () => {
  it('keeps a console page with its query', () => {
    expect(safeNext('/admin/keys?plan=pro&state=active')).toBe('/admin/keys?plan=pro&state=active');
    expect(safeNext('/admin/keys/7')).toBe('/admin/keys/7');
  });

  it.each([
    'https://evil.example/admin/',
    '//evil.example/admin/',
    '/\\evil.example',
    '/admin\\..\\..\\evil',
    '/admin/../v1/pets',
    '/admin/v1/keys',
    '/admin/sign-in',
    'javascript:alert(1)',
    '/admin/\nSet-Cookie:x',
    '/adminx',
  ])('sends %j to the overview', (next) => {
    expect(safeNext(next)).toBe('/admin/');
  });

  it('never leads off the console, whatever it is given', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.webUrl(),
          fc.string().map((s) => `/admin/${s}`),
        ),
        (next) => {
          const out = safeNext(next);
          expect(out).toMatch(/^\/admin(\/|$)/);
          expect(out.startsWith('//')).toBe(false);
          expect(new URL(out, 'http://console.invalid').origin).toBe('http://console.invalid');
        },
      ),
    );
  });
});
