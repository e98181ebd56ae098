// The glue between puppeteer's test suite and the endpoint under test (COMPAT_BROWSER_URL: the
// browser's own debugging port, or a tabtunnel agent endpoint). Both modes run through this same
// glue, so they differ only in the endpoint.
//   * `launch()` (the `puppeteer` shim's): a launch whose options a connection can honour
//     (viewport, insecure certificates, network events, timeouts; the suite's default flags) is
//     `puppeteer.connect` to the endpoint; any other is refused with LAUNCH_REFUSED, which the
//     runner counts as "not applicable": that test needs a browser started its own way.
//   * `testContext()`: the runner rewrites the suite's `createBrowserContext()` calls in
//     mocha-utils to this. A connection to tabtunnel has the user's profile only, so each test
//     gets the default context, starting with no cookies, and "closing" it closes every page the
//     test opened, instead of a new incognito context per test.
import puppeteer from 'puppeteer-core';

/** The message the runner counts as "not applicable" (the test launches its own browser). */
export const LAUNCH_REFUSED = 'tabtunnel-compat: this test launches a browser of its own';

// Launch options a connection honours, or that only say how to start the browser the runner
// already started (mocha-utils' defaults).
const CONNECT_OPTIONS = new Set(['defaultViewport', 'acceptInsecureCerts', 'networkEnabled', 'protocolTimeout', 'slowMo']);
const DEFAULT_LAUNCH_OPTIONS = new Set(['handleSIGINT', 'executablePath', 'headless', 'dumpio', 'protocol', 'args', 'extraPrefsFirefox', 'timeout']);
// The suite's default flag, which the runner passes to the browser it starts.
const DEFAULT_ARG = /^--host-resolver-rules=/;

function connectable(options) {
  return Object.entries(options).every(([key, value]) => {
    if (value === undefined || CONNECT_OPTIONS.has(key)) return true;
    if (!DEFAULT_LAUNCH_OPTIONS.has(key)) return false;
    if (key === 'args') return value.every((arg) => DEFAULT_ARG.test(arg));
    if (key === 'headless') return value === true;
    if (key === 'protocol') return value === 'cdp';
    return true;
  });
}

export async function launch(options = {}) {
  if (!connectable(options)) throw new Error(`${LAUNCH_REFUSED} (${JSON.stringify(options)})`);
  const browserURL = process.env.COMPAT_BROWSER_URL;
  if (!browserURL) throw new Error('tabtunnel-compat: COMPAT_BROWSER_URL is not set');
  const connectOptions = Object.fromEntries(Object.entries(options).filter(([key]) => CONNECT_OPTIONS.has(key)));
  const browser = await puppeteer.connect({ ...connectOptions, browserURL });
  // The suite closes the browsers it launched; a connected one is only let go.
  browser.close = () => browser.disconnect();
  return browser;
}

/** Cookies are the profile's: start every test with none, as a fresh context would. */
async function clearCookies(page) {
  const session = await page.createCDPSession();
  try {
    await session.send('Network.clearBrowserCookies');
  } finally {
    await session.detach().catch(() => {});
  }
}

const CLOSE_TIMEOUT_MS = 5000;

export async function testContext(browser) {
  const context = browser.defaultBrowserContext();
  const before = new Set(browser.targets());
  let cookiesCleared = false;
  const newPage = async (options) => {
    const page = await context.newPage(options);
    if (!cookiesCleared) {
      await clearCookies(page);
      cookiesCleared = true;
    }
    return page;
  };
  // Bounded: a page stuck mid-navigation may never report its close; the next test must still run.
  const close = async () => {
    const opened = browser.targets().filter((t) => t.type() === 'page' && !before.has(t));
    await Promise.all(
      opened.map((target) =>
        Promise.race([
          target
            .page()
            .then((p) => p?.close())
            .catch(() => {}),
          new Promise((resolve) => setTimeout(resolve, CLOSE_TIMEOUT_MS)),
        ]),
      ),
    );
  };
  return new Proxy(context, {
    get(target, property) {
      if (property === 'close') return close;
      if (property === 'newPage') return newPage;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
