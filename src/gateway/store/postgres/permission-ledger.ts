import type pg from "pg";
import type { PermissionRequestInfo, PermissionResolver, PermissionVerdict } from "../../events.js";
import type { LedgerAnswer, LedgerDecision, SharedPermissions } from "../shared-permissions.js";
import type { NotifyListener } from "./notify-listener.js";

/** The NOTIFY channel on which a request's owner is told a person answered it. */
export const PERMISSIONS_CHANNEL = "rudder_permissions";

/** Settled requests are kept this long (to tell "already answered" from "unknown"). */
const KEEP_HOURS = 24;
/** Old requests are pruned once per this many records by a worker. */
const PRUNE_EVERY = 200;

/** Whether the request's owner still drives its channel (holds the unexpired lease). */
const OWNER_LIVE = `EXISTS (SELECT 1 FROM leases l WHERE l.channel_id = p.channel_id
  AND l.owner = p.owner AND l.expires_at >= now())`;

interface DecisionRow {
  decision: PermissionVerdict | null;
  message: string | null;
  resolved_by: PermissionResolver | null;
}

function toDecision(row: DecisionRow | undefined): LedgerDecision | null {
  if (row?.decision == null) return null;
  return { decision: row.decision, message: row.message, resolvedBy: row.resolved_by ?? "person" };
}

/**
 * The `permission_requests` table (see SharedPermissions): one row per request, settled by one
 * statement that only changes an unsettled row, so a request is answered once whoever answers.
 * A person's answer also checks, in that statement, that the owner still holds the channel's
 * lease, and NOTIFYs the owner in the same transaction.
 */
export class PermissionLedger implements SharedPermissions {
  readonly #pool: pg.Pool;
  readonly #notices: NotifyListener;
  #records = 0;

  constructor(pool: pg.Pool, notices: NotifyListener) {
    this.#pool = pool;
    this.#notices = notices;
  }

  async record(owner: string, request: PermissionRequestInfo): Promise<void> {
    await this.#pool.query(
      `INSERT INTO permission_requests (id, channel_id, owner, request, created_at)
       VALUES ($1, $2, $3, $4::json, $5)`,
      [request.id, request.channelId, owner, JSON.stringify(request), request.createdAt],
    );
    this.#records += 1;
    if (this.#records % PRUNE_EVERY === 0) {
      void this.#pool
        .query(
          "DELETE FROM permission_requests WHERE created_at < now() - make_interval(hours => $1)",
          [KEEP_HOURS],
        )
        .catch(() => {});
    }
  }

  async pending(channelId: string): Promise<PermissionRequestInfo[]> {
    const { rows } = await this.#pool.query<{ request: PermissionRequestInfo }>(
      `SELECT request FROM permission_requests p
       WHERE channel_id = $1 AND decision IS NULL AND ${OWNER_LIVE}
       ORDER BY created_at, id`,
      [channelId],
    );
    return rows.map((row) => row.request);
  }

  async answer(
    channelId: string,
    requestId: string,
    verdict: PermissionVerdict,
    message: string | undefined,
  ): Promise<LedgerAnswer> {
    const { rows } = await this.#pool.query<{ owner: string; request: PermissionRequestInfo }>(
      `WITH answered AS (
         UPDATE permission_requests p
         SET decision = $3, message = $4, resolved_by = 'person', settled_at = now()
         WHERE id = $1 AND channel_id = $2 AND decision IS NULL AND ${OWNER_LIVE}
         RETURNING owner, request
       ),
       told AS (
         SELECT pg_notify($5, json_build_object('to', owner, 'id', $1::text)::text) FROM answered
       )
       SELECT owner, request FROM answered, told`,
      [requestId, channelId, verdict, message ?? null, PERMISSIONS_CHANNEL],
    );
    const answered = rows[0];
    if (answered) return { status: "answered", owner: answered.owner, request: answered.request };
    const found = await this.#pool.query<{ owner: string; decision: PermissionVerdict | null }>(
      "SELECT owner, decision FROM permission_requests WHERE id = $1 AND channel_id = $2",
      [requestId, channelId],
    );
    const row = found.rows[0];
    if (!row) return { status: "unknown" };
    if (row.decision !== null) return { status: "already_decided", decision: row.decision };
    return { status: "owner_gone", owner: row.owner };
  }

  async settleOwn(requestId: string, settled: LedgerDecision): Promise<LedgerDecision | null> {
    const updated = await this.#pool.query(
      `UPDATE permission_requests SET decision = $2, message = $3, resolved_by = $4,
         settled_at = now()
       WHERE id = $1 AND decision IS NULL`,
      [requestId, settled.decision, settled.message, settled.resolvedBy],
    );
    if ((updated.rowCount ?? 0) > 0) return null;
    // Settled already (or never stored, as when recording failed): null then too.
    return this.decision(requestId);
  }

  async decision(requestId: string): Promise<LedgerDecision | null> {
    const { rows } = await this.#pool.query<DecisionRow>(
      "SELECT decision, message, resolved_by FROM permission_requests WHERE id = $1",
      [requestId],
    );
    return toDecision(rows[0]);
  }

  listen(
    owner: string,
    onAnswered: (requestId: string) => void,
    onReconnect: () => void,
  ): Promise<{ close(): Promise<void> }> {
    const onPayload = (text: string) => {
      try {
        const payload = JSON.parse(text) as { to?: unknown; id?: unknown };
        if (payload.to === owner && typeof payload.id === "string") onAnswered(payload.id);
      } catch {
        // Not ours to read.
      }
    };
    return this.#notices.listen(PERMISSIONS_CHANNEL, onPayload, onReconnect);
  }
}
