/**
 * `rudder run` compiles its code with V8's code cache (src/cli/load-run-bundle.ts): the first run
 * with a data folder writes the cache there, the next compiles with it; a corrupt or foreign
 * cache is rejected and replaced; where none can be written the run goes on without one. Each
 * run answers the same. `RUDDER_DEBUG_CODE_CACHE=1` makes a run say what it did with the cache.
 */
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { Script } from "node:vm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { codeCachePath } from "../../src/cli/load-run-bundle.js";
import { type FakeMessagesApi, startFakeMessagesApi } from "../helpers/fake-messages-api.js";
import { RUDDER_CLI } from "../helpers/fixtures.js";
import { runRudder } from "../helpers/rudder-cli.js";

let api: FakeMessagesApi;
let scratch: string;

beforeAll(async () => {
  api = await startFakeMessagesApi({ fallback: () => ({ text: "the answer" }) });
  scratch = mkdtempSync(join(tmpdir(), "rudder-code-cache-"));
});

afterAll(async () => {
  await api.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** A one-shot run with `data` as rudder's data folder; its stderr (the cache's report). */
async function runWith(data: string): Promise<string> {
  const workspace = mkdtempSync(join(scratch, "workspace-"));
  const env = {
    PATH: process.env.PATH,
    HOME: scratch,
    RUDDER_HOME: data,
    ANTHROPIC_BASE_URL: api.url,
    ANTHROPIC_API_KEY: "dummy",
    RUDDER_MAX_RETRIES: "0",
    RUDDER_DEBUG_CODE_CACHE: "1",
  };
  const run = await runRudder(["run", "--output-format", "json", "say something"], {
    cwd: workspace,
    env,
  });
  expect(run.code).toBe(0);
  expect(JSON.parse(run.stdout).result).toBe("the answer");
  return run.stderr;
}

/** The cache file the built bundle's runs use with `data`. */
function cacheFile(data: string): string {
  const bundle = readFileSync(join(RUDDER_CLI, "..", "cli-run.cjs"), "utf8");
  const hash = /^\/\/ rudder-run-bundle ([0-9a-f]+)\n/.exec(bundle)?.[1];
  if (hash === undefined) throw new Error("dist/cli-run.cjs names no hash: npm run build");
  return codeCachePath({ RUDDER_HOME: data }, hash);
}

it("the first run writes the cache into the data folder, private, and the second compiles with it", async () => {
  const data = join(scratch, "data-fresh");
  const cache = cacheFile(data);
  expect(cache.startsWith(join(data, "cache"))).toBe(true);
  // Other builds' caches: one unwritten for 31 days goes as the cache is written, one recent stays.
  mkdirSync(join(data, "cache"), { recursive: true, mode: 0o700 });
  const old = join(data, "cache", "run-0123456789abcdef-node20.0.0-x64.v8");
  const recent = join(data, "cache", "run-fedcba9876543210-node20.0.0-x64.v8");
  writeFileSync(old, "old");
  writeFileSync(recent, "recent");
  const monthAgo = new Date(Date.now() - 31 * 24 * 60 * 60 * 1000);
  utimesSync(old, monthAgo, monthAgo);
  expect(await runWith(data)).toBe(
    `rudder: code cache missing ${cache}\nrudder: code cache written ${cache}\n`,
  );
  expect(statSync(cache).mode & 0o777).toBe(0o600);
  expect(statSync(join(data, "cache")).mode & 0o777).toBe(0o700);
  expect(readdirSync(join(data, "cache")).sort()).toEqual(
    [basename(cache), basename(recent)].sort(),
  );
  expect(await runWith(data)).toBe(`rudder: code cache hit ${cache}\n`);
});

it("a corrupt or a foreign cache is rejected and replaced", async () => {
  const data = join(scratch, "data-replaced");
  const cache = cacheFile(data);
  mkdirSync(join(data, "cache"), { recursive: true });
  const corrupt = Buffer.from("not a code cache at all");
  // What V8 made for another script: right version and flags, wrong source.
  const foreign = new Script("globalThis.elsewhere = 1;").createCachedData();
  for (const planted of [corrupt, foreign]) {
    writeFileSync(cache, planted);
    expect(await runWith(data)).toBe(
      `rudder: code cache rejected ${cache}\nrudder: code cache written ${cache}\n`,
    );
    expect(readFileSync(cache).equals(planted)).toBe(false);
  }
});

it("a data folder where no cache can be written still runs, without one", async () => {
  const data = join(scratch, "data-blocked");
  mkdirSync(data);
  // A file where the cache folder goes: unwritable for root too, unlike a mode.
  writeFileSync(join(data, "cache"), "");
  const stderr = await runWith(data);
  expect(stderr).toMatch(/^rudder: code cache missing \S+\nrudder: code cache not written: .+\n$/);
  expect(readFileSync(join(data, "cache"), "utf8")).toBe("");
});
