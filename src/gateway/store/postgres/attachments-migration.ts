/**
 * The PostgreSQL step that gives user messages their attachments (JSON, `MessageAttachment[]`,
 * in `messages.attachments`): the column, `rudder_writes` taking it with each new message (`f`;
 * see rudder-writes-function.ts), and the image marker lines of messages stored before read into
 * it once (legacy-image-markers.ts).
 */
import type pg from "pg";
import { LEGACY_MARKER_ROWS, legacyImageMarkers } from "../legacy-image-markers.js";
import { rudderWritesFunction } from "./rudder-writes-function.js";

/** The step, run inside the migration's transaction. */
export async function addMessageAttachments(client: pg.ClientBase): Promise<void> {
  await client.query("ALTER TABLE messages ADD COLUMN attachments text");
  await client.query(
    rudderWritesFunction("CREATE OR REPLACE", { attachments: true, finishClaims: false }),
  );
  const { rows } = await client.query<{ id: string; text: string }>(LEGACY_MARKER_ROWS);
  for (const row of rows) {
    const images = legacyImageMarkers(row.text);
    if (images.length === 0) continue;
    await client.query("UPDATE messages SET attachments = $1 WHERE id = $2", [
      JSON.stringify(images),
      row.id,
    ]);
  }
}
