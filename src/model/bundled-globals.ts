import { LightHeaders } from "./light-headers.js";

/**
 * Globals the bundled CLI (dist/cli.js) takes from rudder instead of Node. Node defines its fetch
 * classes (`Headers`, `FormData`, `Response` ...) as lazy globals: the first touch of any of them
 * loads undici, which costs a fresh process about 30 ms and 9 MB, a fifth of a one-shot
 * `rudder run`. The Anthropic SDK touches `Headers` and `FormData` on every request, and
 * `nodeHttpFetch` needs nothing else of undici. esbuild's `define` (scripts/bundle-cli.mjs)
 * turns each free reference to these names in the bundle, the SDK's included, into
 * `globalThis.__rudderHeaders` / `globalThis.__rudderFormData`, which this module sets: src/cli.ts
 * imports it first. (A `define` rather than an `inject`: an injected module is imported by every
 * chunk, and each import is a module resolution the one-shot start-up pays for.) The library
 * build (tsc) and the tests use Node's own globals; Node's own globals are never replaced.
 */

/**
 * The SDK asks `body instanceof FormData` of every request body. A FormData names itself in its
 * `Symbol.toStringTag`, so the answer needs no class; constructing one gets Node's own.
 */
function FormDataOnDemand(): FormData {
  return new globalThis.FormData();
}
Object.defineProperty(FormDataOnDemand, Symbol.hasInstance, {
  value: (value: unknown): boolean => Object.prototype.toString.call(value) === "[object FormData]",
});

declare global {
  var __rudderHeaders: typeof LightHeaders | undefined;
  var __rudderFormData: typeof FormDataOnDemand | undefined;
}

globalThis.__rudderHeaders = LightHeaders;
globalThis.__rudderFormData = FormDataOnDemand;
