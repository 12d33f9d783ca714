#!/usr/bin/env -S MALLOC_MMAP_THRESHOLD_=131072 RUDDER_MALLOC_TUNED=1 node
/**
 * The `rudder` executable: picks the subcommand and hands over. Its first line fixes glibc's
 * mmap threshold for this process: glibc otherwise raises it after each large block freed (up to
 * 32 MiB), and the next large blocks (a 20 MB reply's copies) then come from its heap, which it
 * keeps. Ten 20 MB replies left a gateway 52 MiB up, idle, with its JS heap flat; 9 MiB with this
 * (docs/reliability.md). Not passed on to what rudder starts (agents, tools, your commands).
 */
import { main } from "./cli/main.js";

if (process.env.RUDDER_MALLOC_TUNED === "1") {
  delete process.env.MALLOC_MMAP_THRESHOLD_;
  delete process.env.RUDDER_MALLOC_TUNED;
}

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
