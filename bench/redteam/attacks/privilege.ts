/**
 * Point 4 of issue 26: no privilege can be made. A sandboxed command (root or not) makes
 * setuid and setgid files in the workspace every way it can; none may keep the bit on the host.
 */
import { type Attack, onGround } from "../attack.js";
import { noBubblewrap, privilegedFiles, sandboxSession } from "../sandboxed.js";

const ATTEMPTS = [
  "cp /bin/true chmod-u && chmod u-w+s chmod-u",
  "cp /bin/true chmod-g && chmod g+s chmod-g",
  "install -m 4755 /bin/true install-mode",
  "perl -e 'use Fcntl; sysopen(my $f, \"open-mode\", O_CREAT|O_WRONLY, 04755) or die'",
  "cp /bin/true octal && chmod 6755 octal",
];

export const attacks: Attack[] = [
  {
    name: "setuid and setgid files made in the workspace",
    wall: "privilege",
    skip: noBubblewrap,
    run: () =>
      onGround(async (ground) => {
        const session = sandboxSession(ground);
        try {
          await session.run(ATTEMPTS.join("; "));
        } finally {
          session.close();
        }
        const found = privilegedFiles(ground.workspace).map((path) => path.split("/").pop());
        return found.length === 0
          ? { held: true, detail: `${ATTEMPTS.length} ways tried, no setuid/setgid bit kept` }
          : { held: false, detail: `kept: ${found.join(", ")}` };
      }),
  },
];
