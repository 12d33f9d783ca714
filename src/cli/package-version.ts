import { readFileSync } from "node:fs";

/** rudder's version, from its package.json (two folders up from src/cli and dist/cli). */
export function packageVersion(): string {
  try {
    const url = new URL("../../package.json", import.meta.url);
    return (JSON.parse(readFileSync(url, "utf8")) as { version: string }).version;
  } catch {
    return "unknown";
  }
}
