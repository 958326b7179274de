/**
 * The steps every browser test file takes: a page per subtest that fails it on a console error or a request
 * to another origin, signing in, and opening a view by its address.
 */
import type { Browser } from 'playwright-core';
import type { TestService } from '../helpers/harness.js';
import { openConsole, screenshot, settled, type ApiCall, type ConsolePage } from './browser.js';

interface Asserts {
  same(found: unknown, wanted: unknown, message: string): unknown;
}

export function consolePages(browser: Browser, svc: TestService, recorded: Record<string, ApiCall[]> = {}) {
  /** Opens a page for one subtest and checks, at its end, that the page logged no error and left no origin. */
  async function withPage(t: Asserts, role: string, run: (cp: ConsolePage) => Promise<void>): Promise<void> {
    const cp = await openConsole(browser, svc.base, role);
    try {
      await run(cp);
    } catch (err) {
      await screenshot(cp.page, `failed-${cp.view}`).catch(() => undefined);
      throw err;
    } finally {
      t.same(cp.errors, [], 'no console error in the page');
      t.same(cp.foreign, [], 'no request to another origin');
      (recorded[role] ??= []).push(...cp.calls.filter((c) => c.view !== 'signin'));
      await cp.close();
    }
  }

  async function signIn(cp: ConsolePage, token: string, path = '/console/'): Promise<void> {
    await cp.page.goto(svc.base + path);
    await cp.page.waitForSelector('input[name="credential"]');
    await cp.page.fill('input[name="credential"]', token);
    await cp.page.click('button[type="submit"]');
  }

  /** Opens a view by its address and waits until it has loaded. */
  async function open(cp: ConsolePage, view: string, path: string): Promise<void> {
    cp.view = view;
    await cp.page.evaluate(`history.pushState(null, '', ${JSON.stringify(path)}); dispatchEvent(new PopStateEvent('popstate'));`);
    await settled(cp.page, view);
  }

  /** Signs in and waits for the view the address opens. */
  async function signInTo(cp: ConsolePage, token: string, view: string, path: string): Promise<void> {
    await signIn(cp, token, path);
    cp.view = view;
    await settled(cp.page, view);
  }

  return { withPage, signIn, open, signInTo };
}
