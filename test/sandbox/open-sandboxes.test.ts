/**
 * Sandboxes made one after another in one process (a `rudder acp` session each, the test
 * workers' files) share one `exit` listener: each closed one leaves nothing on `process`.
 */
import { describe, expect, it } from "vitest";
import { waitFor } from "../helpers/wait-for.js";
import { NO_BUBBLEWRAP, sandboxFixture } from "./sandbox-helpers.js";

describe.skipIf(NO_BUBBLEWRAP !== undefined)(
  `sandboxes' exit listeners ${NO_BUBBLEWRAP ?? ""}`,
  () => {
    it("twelve sandboxes started and closed add at most one exit listener", async () => {
      const before = process.listenerCount("exit");
      for (let index = 0; index < 12; index += 1) {
        const fixture = sandboxFixture();
        try {
          fixture.sandbox.warm();
          // Its state folder (what the exit listener removes) is made as its sandbox starts.
          await waitFor(() => fixture.sandbox.processLimit() !== undefined, "the sandbox to start");
        } finally {
          fixture.cleanup();
        }
      }
      expect(process.listenerCount("exit")).toBeLessThanOrEqual(before + 1);
    });
  },
);
