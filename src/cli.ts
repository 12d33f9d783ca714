#!/usr/bin/env node
/** The `rudder` executable: picks the subcommand and hands over. */
// First: the bundle's Headers and FormData (see the module), before any other code runs.
import "./model/bundled-globals.js";
import { main } from "./cli/main.js";

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `rudder: internal error: ${error instanceof Error ? error.stack : String(error)}\n`,
    );
    process.exitCode = 70;
  },
);
