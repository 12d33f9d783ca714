/**
 * `rudder run`'s code, compiled with V8's code cache. Node 20 compiles every ES module afresh at
 * each start (its compile cache, `module.enableCompileCache`, came with Node 22): loading the run
 * path's chunks took a one-shot run ~45 ms of the ~190 ms before its first model request, and
 * ~26 ms this way (bench/startup.ts). So the build also writes the run path as one CommonJS
 * module in a function expression, dist/cli-run.cjs (scripts/bundle-cli.mjs), and this compiles
 * it as a `vm.Script` with the code V8 made for it in an earlier run.
 *
 * The cache is code that runs unconfined, so it lives where sandboxed commands can neither read
 * nor write: `cache/` in rudder's data folder (`$RUDDER_HOME`, default `~/.rudder`), which the
 * sandbox hides wherever it is (under `~/.cache` a sandbox whose workspace is the home folder
 * could plant one). One file per bundle (the hash on its first line), Node version and
 * architecture; V8 itself rejects data made by another V8, with other flags or for a source of
 * another length. A missing or rejected cache is written once the run's first HTTP request has
 * gone out (the model is thinking then, nothing waits on this process), 0600 under a temporary
 * name renamed into place; cache files nobody has rewritten for 30 days go then too (other
 * builds' caches, after an upgrade).
 *
 * Anything that fails returns `undefined` before the bundle runs (the caller then imports the ES
 * modules as before) or, when writing, is let go. `RUDDER_DEBUG_CODE_CACHE=1` says on stderr
 * what happened: `hit`, `missing`, `rejected`, `written`, `not written`, `unused`.
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import type { ClientRequest } from "node:http";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Script } from "node:vm";

type RunModule = typeof import("./run.js");

const REQUEST_START = "http.client.request.start";
const STALE_MS = 30 * 24 * 60 * 60 * 1000;

/** Where the code cache of the bundle with `hash` is kept for this Node. */
export function codeCachePath(env: NodeJS.ProcessEnv, hash: string): string {
  // The data folder as setup-sandbox.ts hides it.
  const dataFolder = resolve(env.RUDDER_HOME ?? join(env.HOME ?? homedir(), ".rudder"));
  return join(dataFolder, "cache", `run-${hash}-node${process.versions.node}-${process.arch}.v8`);
}

/** The run path's exports from dist/cli-run.cjs, or `undefined` where it cannot be loaded so. */
export function loadRunBundle(env: NodeJS.ProcessEnv): RunModule | undefined {
  const report = (line: string) => {
    if (env.RUDDER_DEBUG_CODE_CACHE === "1") process.stderr.write(`rudder: code cache ${line}\n`);
  };
  const bundle = fileURLToPath(new URL("../cli-run.cjs", import.meta.url));
  let source: string;
  try {
    source = readFileSync(bundle, "utf8");
  } catch {
    // Not built (the tsc output, tsx): the ES modules.
    return undefined;
  }
  const hash = /^\/\/ rudder-run-bundle ([0-9a-f]+)\n/.exec(source)?.[1];
  let cachePath: string | undefined;
  let cachedData: Buffer | undefined;
  try {
    if (hash !== undefined) cachePath = codeCachePath(env, hash);
    if (cachePath !== undefined) cachedData = readFileSync(cachePath);
  } catch {}
  let exports: RunModule;
  let script: Script;
  try {
    script = new Script(source, {
      filename: bundle,
      ...(cachedData === undefined ? {} : { cachedData }),
    });
    const module = { exports: {} as RunModule };
    // Its import() of a package or built-in, which a vm.Script cannot do itself on Node 20.
    const importFromHere = (specifier: string) => import(specifier);
    script
      .runInThisContext()
      .call(
        module.exports,
        module.exports,
        createRequire(bundle),
        module,
        bundle,
        dirname(bundle),
        importFromHere,
      );
    exports = module.exports;
  } catch (error) {
    report(`unused: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
  if (cachePath === undefined) return exports;
  if (cachedData !== undefined && script.cachedDataRejected !== true) {
    report(`hit ${cachePath}`);
    return exports;
  }
  report(`${cachedData === undefined ? "missing" : "rejected"} ${cachePath}`);
  const onRequest = (message: unknown) => {
    unsubscribe(REQUEST_START, onRequest);
    (message as { request: ClientRequest }).request.once("finish", () => {
      setImmediate(() => report(writeCodeCache(script, cachePath)));
    });
  };
  subscribe(REQUEST_START, onRequest);
  return exports;
}

/** Writes what V8 has compiled of `script` so far to `path`; the line to report. */
function writeCodeCache(script: Script, path: string): string {
  const folder = dirname(path);
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    writeFileSync(temporary, script.createCachedData(), { mode: 0o600 });
    renameSync(temporary, path);
  } catch (error) {
    try {
      rmSync(temporary, { force: true });
    } catch {}
    return `not written: ${error instanceof Error ? error.message : String(error)}`;
  }
  try {
    removeStale(folder, path);
  } catch {}
  return `written ${path}`;
}

/**
 * Removes the cache files in `folder` but `kept` (and the temporary files of writers that died)
 * last written over 30 days ago.
 */
function removeStale(folder: string, kept: string): void {
  const now = Date.now();
  for (const name of readdirSync(folder)) {
    const path = join(folder, name);
    if (path === kept || !/^run-.*\.v8(\.\d+\.tmp)?$/.test(name)) continue;
    if (now - statSync(path).mtimeMs > STALE_MS) rmSync(path, { force: true });
  }
}
