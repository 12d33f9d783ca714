// A test process that owns a throwaway PostgreSQL server, for the test that SIGKILLs it:
// started with `node --import tsx test/gateway/store/postgres-owner-child.ts`, it prints one JSON
// line `{dataFolder, pid}` (the server's data folder and postmaster pid) once the server is
// ready, and waits to be killed.
import pg from "pg";
import { startPostgresCluster } from "../../fixtures/postgres-cluster.js";

const cluster = await startPostgresCluster();
const client = new pg.Client({ connectionString: cluster.url });
await client.connect();
const { rows } = await client.query<{ data_directory: string; pid: number }>(
  "SELECT current_setting('data_directory') AS data_directory, pg_backend_pid() AS pid",
);
const backend = rows[0]!;
process.stdout.write(
  `${JSON.stringify({ dataFolder: backend.data_directory, backendPid: backend.pid })}\n`,
);
// Holds a backend open, as a test mid-query would.
setInterval(() => {}, 60_000);
