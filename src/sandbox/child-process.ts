/**
 * node:child_process, loaded at the first spawn rather than with the modules that spawn: a
 * one-shot `rudder run` spawns nothing before its first model request, and loading the module
 * (with the net, dgram and stream internals it brings) cost it ~4 ms there (bench/startup.ts).
 * Types come from `import type`, which loads nothing.
 */
import { createRequire } from "node:module";

let loaded: typeof import("node:child_process") | undefined;

export function childProcess(): typeof import("node:child_process") {
  loaded ??= createRequire(import.meta.url)(
    "node:child_process",
  ) as typeof import("node:child_process");
  return loaded;
}
