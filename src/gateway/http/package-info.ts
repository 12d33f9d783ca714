/** rudder's own package: its folder (where `web/dist` is) and its version, for the page, `/api/info` and `rudder --version`. */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * The folder of rudder's own package.json, found by walking up from this file
 * (the same from `src/gateway/http` under tsx, from `dist/gateway/http` when built and from
 * `dist/` in the bundled executable).
 */
export function packageRoot(from = import.meta.dirname): string {
  let directory = from;
  for (;;) {
    const candidate = join(directory, "package.json");
    if (existsSync(candidate)) {
      const manifest = JSON.parse(readFileSync(candidate, "utf8")) as { name?: string };
      if (manifest.name === "rudder") return directory;
    }
    const parent = dirname(directory);
    if (parent === directory) return from;
    directory = parent;
  }
}

export function packageVersion(): string {
  try {
    const manifest = JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8")) as {
      version?: string;
    };
    return manifest.version ?? "0.0.0";
  } catch {
    return "0.0.0";
  }
}
