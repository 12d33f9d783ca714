/**
 * The sandboxes of this process that have a state folder to remove, closed together at its exit
 * by one `exit` listener: a process may make many in turn (one per `rudder acp` session, the test
 * workers' files), and a listener each, kept after its `close`, held every closed sandbox in memory
 * (MaxListenersExceededWarning past ten).
 */

/** What is closed at exit; closing it must end its registration (`closeAtExit`'s returned function). */
interface Closable {
  close(): void;
}

const open = new Set<Closable>();
let listening = false;

/** Closes `sandbox` when the process exits, until the returned function is called. */
export function closeAtExit(sandbox: Closable): () => void {
  if (!listening) {
    listening = true;
    process.once("exit", () => {
      for (const each of [...open]) each.close();
    });
  }
  open.add(sandbox);
  return () => {
    open.delete(sandbox);
  };
}
