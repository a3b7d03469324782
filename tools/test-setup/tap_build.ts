/**
 * `npm test`'s first step: make sure tap's test class is built with the plugins `package.json` asks for.
 *
 * tap ships its test class built with every default plugin, TypeScript's among them, and rebuilds it
 * when the configured list differs, but only once the runner has started: the runner has by then read
 * the loaders to give each test process from the class as shipped. On the first run after `npm install`
 * every test file therefore also loaded the TypeScript plugin's compiler hook beside tsx and paid for it
 * in every process (the embedded suite took 296 s instead of 188 s on 2 cores). Building before the
 * runner starts gives the first run the same loaders as every later one. Costs nothing when built.
 */
import { spawnSync } from 'node:child_process';
import { TapConfig } from '@tapjs/config';
import { signature } from '@tapjs/test';

const config = await TapConfig.load();
if (config.pluginSignature !== signature) {
  const built = spawnSync('tap', ['build'], { stdio: 'inherit', shell: false });
  process.exitCode = built.status ?? 1;
}
