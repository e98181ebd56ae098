// `puppeteer` for puppeteer's test suite: puppeteer-core (the version tests/package.json pins),
// whose launch() connects to the runner's endpoint instead (see ../tabtunnel-compat).
import puppeteer from 'puppeteer-core';
import { launch } from '../tabtunnel-compat/index.js';

export * from 'puppeteer-core';

const compatPuppeteer = new Proxy(puppeteer, {
  get(target, property) {
    if (property === 'launch') return launch;
    const value = Reflect.get(target, property, target);
    return typeof value === 'function' ? value.bind(target) : value;
  },
});

export { launch };
export default compatPuppeteer;
