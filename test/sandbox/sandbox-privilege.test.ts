/**
 * No privilege can be made from the sandbox (issue 26, point 4): with the real bubblewrap, a
 * command (root here, as in CI) that tries every way to make a setuid or setgid file in the
 * workspace leaves none, while ordinary modes (chmod +x, a created 0755 file) still work.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { privilegeFilter } from "../../src/sandbox/privilege-filter.js";
import { NO_BUBBLEWRAP, type SandboxFixture, sandboxFixture } from "./sandbox-helpers.js";

let fixture: SandboxFixture | undefined;
afterEach(() => {
  fixture?.cleanup();
  fixture = undefined;
});

describe("the privilege filter", () => {
  it("is a whole number of BPF instructions ending in allow", () => {
    const filter = privilegeFilter("x64");
    expect(filter).toBeDefined();
    expect((filter as Buffer).length % 8).toBe(0);
    expect((filter as Buffer).readUInt32LE((filter as Buffer).length - 4)).toBe(0x7fff0000);
    expect(privilegeFilter("ia32")).toBeUndefined();
  });
});

describe.skipIf(NO_BUBBLEWRAP !== undefined || privilegeFilter() === undefined)(
  `the sandbox's privilege filter ${NO_BUBBLEWRAP ?? ""}`,
  () => {
    it("refuses setuid and setgid bits every way and keeps ordinary modes", async () => {
      fixture = sandboxFixture();
      const { run, workspace } = fixture;
      const result = await run(
        [
          "cp /bin/true by-chmod && chmod u-w+s by-chmod; echo chmod=$?",
          "cp /bin/true by-chmod-g && chmod g+s by-chmod-g; echo chmodg=$?",
          "install -m 4755 /bin/true by-install; echo install=$?",
          `perl -e 'use Fcntl; sysopen(my $f, "by-open", O_CREAT|O_WRONLY, 06755) or exit 3'; echo open=$?`,
          "cp /bin/true plain && chmod 755 plain; echo plain=$?",
          `perl -e 'use Fcntl; sysopen(my $f, "created", O_CREAT|O_WRONLY, 0755) or exit 3'; echo created=$?`,
        ].join("; "),
      );
      expect(result.output).toMatch(/chmod=1/);
      expect(result.output).toMatch(/chmodg=1/);
      expect(result.output).toMatch(/install=1/);
      expect(result.output).toMatch(/open=3/);
      expect(result.output).toMatch(/plain=0/);
      expect(result.output).toMatch(/created=0/);
      for (const name of ["by-chmod", "by-chmod-g", "by-install", "plain", "created"]) {
        expect(statSync(join(workspace, name)).mode & 0o6000, name).toBe(0);
      }
      expect(statSync(join(workspace, "plain")).mode & 0o777).toBe(0o755);
    });
  },
);
