import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { type FakeMessagesApi, startFakeMessagesApi } from "../helpers/fake-messages-api.js";
import { type RudderRun, startRudder } from "../helpers/rudder-cli.js";
import { type TempHome, tempHome } from "../helpers/temp-folders.js";

export interface RudderFixture {
  /** The fake Messages API, answering "done" when nothing was pushed. */
  api: FakeMessagesApi;
  /** The test's folder: `work/` (the workspace), `home/` (HOME), and TMPDIR itself. */
  root: string;
  workspace: string;
  /** Starts the built `rudder` in the workspace against the fake API; killed after the test. */
  rudder(args: string[], env?: NodeJS.ProcessEnv): RudderRun;
}

/**
 * Registers, for each test of the file: a fake Messages API, a fresh root
 * folder (under the system's temporary folder, named `prefix...`), and the
 * killing of every rudder started and the removal of the folder afterwards.
 */
export function rudderFixture(prefix: string): RudderFixture {
  const runs: RudderRun[] = [];
  const fixture = {
    rudder(args: string[], env: NodeJS.ProcessEnv = {}): RudderRun {
      const run = startRudder(args, {
        cwd: fixture.workspace,
        env: {
          PATH: process.env.PATH,
          HOME: join(fixture.root, "home"),
          TMPDIR: fixture.root,
          ANTHROPIC_BASE_URL: fixture.api.url,
          ANTHROPIC_API_KEY: "dummy",
          RUDDER_MAX_RETRIES: "0",
          ...env,
        },
      });
      runs.push(run);
      return run;
    },
  } as RudderFixture;
  let folders: TempHome | undefined;
  beforeEach(async () => {
    fixture.api = await startFakeMessagesApi({ fallback: () => ({ text: "done" }) });
    folders = tempHome(prefix);
    fixture.root = folders.root;
    fixture.workspace = folders.workspace;
  });
  afterEach(async () => {
    for (const run of runs.splice(0)) run.kill();
    await fixture.api.close();
    folders?.remove();
  });
  return fixture;
}
