/**
 * Drives the built console in Debian's Chromium (playwright-core, no browser
 * download). Every page fails its test on a console error or on a request to
 * another origin; the API calls each view makes are recorded for the
 * `console` bench scenario; screenshots go to test-results/console/.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const chromiumPath = process.env.SVC_TEST_CHROMIUM ?? '/usr/bin/chromium';
export const screenshotDir = 'test-results/console';
export const callsFile = 'bench/console-calls.json';

/** Null (with the reason) when the browser is missing and not required; throws when SVC_TEST_REQUIRE_BROWSER=1. */
export async function launchBrowser(): Promise<Browser | string> {
  if (!existsSync(chromiumPath)) {
    const reason = `no Chromium at ${chromiumPath} (apt-get install chromium)`;
    if (process.env.SVC_TEST_REQUIRE_BROWSER === '1') throw new Error(`${reason}; SVC_TEST_REQUIRE_BROWSER=1 requires it`);
    return reason;
  }
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

export interface ApiCall {
  view: string;
  role: string;
  method: string;
  path: string;
  /** Unix seconds of the call: the bench moves the recorded windows from here onto its history. */
  recorded_at: number;
  /**
   * Which burst of calls this one went out in: a burst starts when a call leaves while no other API call of the
   * page is in flight (a view opening, a filter changed), so the bench fires each burst at once, one after another,
   * as the console does, and not every call a view ever made at once.
   */
  burst: number;
}

export interface ConsolePage {
  page: Page;
  context: BrowserContext;
  /** Console errors and uncaught exceptions, apart from the HTTP statuses the test expects. */
  errors: string[];
  /** Requests that left the service's origin. */
  foreign: string[];
  /** API calls (not the console's own files) since the page opened. */
  calls: ApiCall[];
  /** What the calls are attributed to. */
  view: string;
  /** The current burst (see ApiCall.burst) and the API calls still in flight. */
  burst: number;
  inflight: number;
  /** HTTP error statuses this test expects (the browser logs "Failed to load resource" for them). */
  allowStatus: Set<number>;
  close(): Promise<void>;
}

/** Bursts are numbered across every page of the run, so two pages' bursts never share a number. */
let bursts = 0;

export async function openConsole(browser: Browser, base: string, role: string): Promise<ConsolePage> {
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 }, colorScheme: 'light' });
  const page = await context.newPage();
  const origin = new URL(base).origin;
  const cp: ConsolePage = {
    page,
    context,
    errors: [],
    foreign: [],
    calls: [],
    view: 'signin',
    burst: 0,
    inflight: 0,
    allowStatus: new Set(),
    close: () => context.close(),
  };
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    const status = /status of (\d{3})/.exec(msg.text())?.[1];
    if (status && cp.allowStatus.has(Number(status))) return;
    cp.errors.push(msg.text());
  });
  page.on('pageerror', (err) => cp.errors.push(`uncaught: ${err.message}`));
  page.on('crash', () => cp.errors.push('the page crashed'));
  context.on('request', (req) => {
    const url = new URL(req.url());
    if (url.protocol === 'data:' || url.protocol === 'blob:') return;
    if (url.origin !== origin) {
      cp.foreign.push(req.url());
      return;
    }
    if (url.pathname.startsWith('/console')) return;
    if (cp.inflight++ === 0) cp.burst = ++bursts;
    cp.calls.push({ view: cp.view, role, method: req.method(), path: url.pathname + url.search, recorded_at: Math.floor(Date.now() / 1000), burst: cp.burst });
  });
  const isApiCall = (u: string): boolean => {
    const url = new URL(u);
    return url.origin === origin && !url.pathname.startsWith('/console');
  };
  context.on('requestfinished', (req) => {
    if (isApiCall(req.url())) cp.inflight--;
  });
  context.on('requestfailed', (req) => {
    if (isApiCall(req.url())) cp.inflight--;
  });
  return cp;
}

/** Waits until the view is shown and nothing in it is still loading. */
export async function settled(page: Page, view: string): Promise<void> {
  await page.waitForSelector(`main#content[data-view="${view}"]`, { timeout: 15_000 });
  await page.waitForFunction(() => (globalThis as unknown as PageGlobal).document.querySelectorAll('.state.loading').length === 0, undefined, {
    timeout: 15_000,
  });
}

/**
 * The page's globals as predicates see them (this file compiles without the DOM library). Predicates are
 * functions, not strings: the console's CSP forbids eval, and Playwright evaluates string predicates with it.
 */
interface PageGlobal {
  document: {
    querySelectorAll(s: string): { length: number };
    querySelector(s: string): { textContent: string | null } | null;
  };
}

/** Waits until the element's text is exactly `text`. */
export async function waitText(page: Page, selector: string, text: string): Promise<void> {
  await page.waitForFunction(
    ([sel, want]) => (globalThis as unknown as PageGlobal).document.querySelector(sel)?.textContent === want,
    [selector, text] as const,
    { timeout: 15_000 },
  );
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(screenshotDir, { recursive: true });
  const path = join(screenshotDir, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * Writes the recorded calls of one role into bench/console-calls.json, keeping
 * the other roles' entries: the bench replays what the views really asked.
 */
export function saveCalls(role: string, calls: ApiCall[]): void {
  let all: ApiCall[] = [];
  try {
    all = JSON.parse(readFileSync(callsFile, 'utf8')) as ApiCall[];
  } catch {
    all = [];
  }
  const seen = new Set<string>();
  const mine = calls.filter((c) => {
    const k = `${c.view} ${c.method} ${c.path}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  const next = [...all.filter((c) => c.role !== role), ...mine];
  writeFileSync(callsFile, `[\n${next.map((c) => JSON.stringify(c)).join(',\n')}\n]\n`);
}
